#!/bin/sh
# dump the hook's stdin JSON to a file named after the event; SessionStart / BeforeAgent add a marker context
d=/tmp/gmhome/dumps; n=$(ls $d | wc -l); cat > "$d/$(printf %02d $n)-$1.json"
case "$1" in SessionStart|BeforeAgent) printf '{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"MARKER-%s-CONTEXT"}}\n' "$1" "$1";; esac
