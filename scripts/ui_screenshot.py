"""Take the recall-view screenshot of docs/ui.md (docs/img/recall.png): the sample conversation ingested
into a throw-away database, `hela ui --no-browser` started on it, one recall opened in Debian's chromium
through Playwright at 1280x800.

    python scripts/ui_screenshot.py [OUT.png]
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
QUESTION = "Who looked after Tofu while Jonas was hiking in Madeira?"


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "img" / "recall.png"
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HELA_DB": f"{tmp}/hela.db", "HELA_HOME": f"{tmp}/home"}
        subprocess.run([sys.executable, "-m", "hela_cli", "ingest", str(REPO / "sample_data" / "conversation.json")],
                       env=env, check=True, capture_output=True)
        proc = subprocess.Popen([sys.executable, "-m", "hela_cli", "ui", "--no-browser"], env=env,
                                stderr=subprocess.DEVNULL)
        try:
            run_dir = Path(tmp, "home", "ui")
            while not (run_dir.exists() and list(run_dir.glob("ui-*.json"))):
                if proc.poll() is not None:
                    raise SystemExit("hela ui did not start")
                time.sleep(0.1)
            url = json.loads(next(run_dir.glob("ui-*.json")).read_text())["url"]
            with sync_playwright() as p:
                b = p.chromium.launch(executable_path="/usr/bin/chromium",
                                      args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                            "--disable-component-update", "--disable-sync", "--no-first-run"])
                page = b.new_page(viewport={"width": 1280, "height": 800})
                page.goto(url)
                page.goto(url.split("?")[0] + f"recall?space=demo&q={quote(QUESTION)}")
                page.locator("svg#recall-graph a.node").first.focus()
                box = page.locator("section").bounding_box()
                page.screenshot(path=str(out), full_page=True,   # the graph, its caption, the first rows
                                clip={"x": 0, "y": box["y"] - 8, "width": 1280, "height": 860})
                b.close()
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
    print(f"{out}: {out.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
