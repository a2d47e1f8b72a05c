#!/bin/bash
# The docs' advice works where they give it: a paragraph that says `systemctl enable`
# also says where systemd runs (/run/systemd/system exists). Elsewhere, in a container or
# under another init, systemctl enable fails and leaves its symlink behind.
# Paragraphs are separated by blank lines; a man page has none, so it is one.
set -u
SRC=${1:?usage: docs-advice.sh SOURCE-DIR}
bad=0 files=0
while IFS= read -r -d '' f; do
	files=$((files + 1))
	out=$(awk -v RS= -v f="${f#"$SRC"/}" \
		'/systemctl enable/ && !/\/run\/systemd\/system/ { print f ": " $0 "\n" }' "$f")
	if [ -n "$out" ]; then
		echo "FAIL: systemctl enable without where systemd runs (/run/systemd/system):" >&2
		sed 's/^/  /' <<<"$out" >&2
		bad=1
	fi
done < <(find "$SRC/README.md" "$SRC/doc" "$SRC/examples" -type f \
	\( -name '*.md' -o -name '*.[1-8]' \) -print0)
[ $files -gt 0 ] || { echo "FAIL: no docs under $SRC" >&2; exit 1; }
[ $bad = 0 ] || exit 1
echo "ok - $files docs: every systemctl enable says where systemd runs"
