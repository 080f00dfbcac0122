# The lab's HTML timeline in a real browser (lab/html_page.html, docs/teaching.md).
#
#   make lab-html-check   (part of make check) every scenario's page, made by
#                         `stvm-lab run NAME --html`, loaded by Debian's chromium
#                         headless (tests/lab_html_browser.py, one browser for all pages,
#                         about 15 s): a lane per process, a mark per instant, a real
#                         click on a mark shows its detail, a click on the time axis the
#                         run queue; a screenshot per scenario in build/lab-html/NAME.png.
#                         chromium comes from scripts/install-deps.sh (make setup); when it
#                         is missing the check fails and says so, it is never skipped.

LAB_HTML_OUT := $(B)/lab-html

.PHONY: lab-html-check
lab-html-check: $(B)/stvm-lab
	@echo "== lab-html: each scenario's page in headless chromium (screenshots in $(LAB_HTML_OUT)/)"
	@python3 tests/lab_html_browser.py $(B)/stvm-lab $(LAB_HTML_OUT)

CHECK_EXTRA += lab-html-check
