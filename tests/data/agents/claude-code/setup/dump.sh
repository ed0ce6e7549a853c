#!/bin/sh
# dump the hook's stdin JSON to a file named after the event; SessionStart / UserPromptSubmit add a marker context
d=/tmp/cchome2/dumps; n=$(ls $d | wc -l); cat > "$d/$(printf %02d $n)-$1.json"
case "$1" in SessionStart|UserPromptSubmit) printf '{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"MARKER-%s-CONTEXT"}}\n' "$1" "$1";; esac
