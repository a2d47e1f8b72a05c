#!/bin/bash
# Every man page in DOC-DIR renders without a warning: groff as man runs it (tbl first,
# every warning on, an 80-column terminal's line length) and mandoc's lint (warnings and
# errors; its style notes are a matter of taste). A warning is a page that renders wrong
# somewhere: a table wider than the terminal, a date a formatter cannot read, a macro
# misused. Skips only when this host has neither formatter.
# With TOOLS-DIR, also: every environment variable a program there reads is in the
# ENVIRONMENT section of its page (tools/NAME.c, DOC-DIR/NAME.[1-8]).
set -u
DOC=${1:?usage: man-pages.sh DOC-DIR [TOOLS-DIR]}
TOOLS=${2:-}
have_groff=0 have_mandoc=0
command -v groff >/dev/null && have_groff=1
command -v mandoc >/dev/null && have_mandoc=1
if [ $have_groff = 0 ] && [ $have_mandoc = 0 ]; then
	echo "SKIP: neither groff nor mandoc is installed (apt-get install groff-base mandoc)" >&2
	exit 77
fi
env_bad=0
for src in ${TOOLS:+"$TOOLS"/*.c}; do
	name=$(basename "$src" .c)
	page=$(ls "$DOC/$name".[1-8] 2>/dev/null | head -1)
	[ -n "$page" ] || continue
	env=$(sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' "$page")
	for var in $(grep -o 'getenv("[A-Z0-9_]*")' "$src" | sed 's/.*("\(.*\)")/\1/' | sort -u); do
		grep -q "^\.B $var\$" <<<"$env" && continue
		echo "FAIL: $name reads $var, which $page's ENVIRONMENT does not list" >&2
		env_bad=1
	done
done
[ $env_bad = 0 ] || exit 1

[ $have_mandoc = 1 ] || echo "note: mandoc not installed, groff alone checks the pages" >&2
[ $have_groff = 1 ] || echo "note: groff not installed, mandoc alone checks the pages" >&2

pages=0 bad=0
for page in "$DOC"/*.[1-8]; do
	[ -e "$page" ] || continue
	pages=$((pages + 1))
	out=
	if [ $have_groff = 1 ]; then
		out+=$(LC_ALL=C.UTF-8 groff -t -ww -z -man -Tutf8 -rLL=78n "$page" 2>&1)
	fi
	if [ $have_mandoc = 1 ]; then
		out+=${out:+$'\n'}$(mandoc -T lint -W warning "$page" 2>&1)
	fi
	if [ -n "$out" ]; then
		echo "FAIL: $page:" >&2
		sed 's/^/  /' <<<"$out" >&2
		bad=$((bad + 1))
	fi
done
[ $pages -gt 0 ] || { echo "FAIL: no man pages in $DOC" >&2; exit 1; }
[ $bad = 0 ] || exit 1
echo "ok - $pages man pages render without warnings"
