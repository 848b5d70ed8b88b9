# Two entry points (README quick start): `make demo` and `make test`. Both set up .venv first.
# `make docs` builds the documentation site into site/ (mkdocs.yml).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SAMPLE := samples/aaic-sample.csv.gz

.PHONY: demo test test-fast test-deep dev bench clean example-archive screenshots docs mutate

KERNELS := $(wildcard swftools/*/*.pyx swftools/*/*/*.pyx swftools/*/*/*/*.pyx \
                     swftools/*/*.pxd swftools/*/*/*.pxd swftools/*/*/*/*.pxd)

# The editable install builds the compiled kernels (Cython, setup.py) with the C compiler; without
# one it still installs, and swftools runs the pure-Python kernels (same results, much slower) and
# says so once per process. An edited .pyx or .pxd is rebuilt by the next make (a new install).
$(BIN)/swftools: pyproject.toml setup.py $(KERNELS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,docs]'
	# an older install's empty package folders would shadow the editable finder as a namespace package
	find $(VENV)/lib -path '*/site-packages/swftools*' -depth -type d -empty -delete 2>/dev/null || true
	# cffconvert is used only for its CFF 1.2.0 JSON Schema (tests validate CITATION.cff against it);
	# its own runtime pins (jsonschema<4) conflict with ours, so it is installed without them.
	$(BIN)/python -m pip install --quiet --no-deps cffconvert==2.0.0
	# bytecode for the editable package, as a wheel install has it (with PYTHONDONTWRITEBYTECODE
	# set, every command would otherwise compile the modules it imports: ~0.1 s a process)
	$(BIN)/python -m compileall -q swftools
	touch $@

dev: $(BIN)/swftools

# The maintainer's whole path on the bundled sample, offline: convert, validate, replay against the
# recorded schedule, report (with the HTML page), release with the example key, verify.
demo: $(BIN)/swftools
	mkdir -p out
	$(BIN)/swftools convert $(SAMPLE) --out out/aaic-sample --to package --force
	$(BIN)/swftools convert $(SAMPLE) --out out/aaic-sample.swf --force
	$(BIN)/swftools validate out/aaic-sample
	$(BIN)/swftools replay out/aaic-sample --compare --out out/replay --force
	$(BIN)/swftools report out/aaic-sample --out out/report --html --force
	chmod 600 archive/example-key.txt  # git keeps no mode: a key readable by others is warned about
	$(BIN)/swftools release $(SAMPLE) --out out/archive --version 1.0.0 \
	  --settings archive/release-settings.example.json --key-file archive/example-key.txt --force
	$(BIN)/swftools verify out/archive
	@echo "wrote out/aaic-sample/ (data package), out/aaic-sample.swf, out/replay/, out/report/"
	@echo "the archive's page: $(CURDIR)/out/archive/index.html"

test: $(BIN)/swftools
	$(BIN)/python -m pytest -q

test-fast: $(BIN)/swftools
	$(BIN)/python -m pytest -q -m "not slow"

# Every property with 5x its examples (tests/conftest.py: examples and the hypothesis profiles);
# .github/workflows/mutation.yml runs it weekly.
test-deep: $(BIN)/swftools
	SWFTOOLS_TEST_DEPTH=5 $(BIN)/python -m pytest -q

bench: $(BIN)/swftools
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

# Mutation score of the core modules (tools/mutate.py, DEVELOPING.md): hours on 2 cores, so not
# in CI's default run; .github/workflows/mutation.yml runs it weekly. MODULES=... for a subset,
# JOBS=1 to test one mutant at a time on a shared machine (default: one per CPU).
mutate: $(BIN)/swftools
	$(BIN)/python -m pip install --quiet 'mutmut>=3.3,<4'
	$(BIN)/python tools/mutate.py $(MODULES) $(if $(JOBS),--jobs $(JOBS)) --report mutation-report.md

clean:
	rm -rf $(VENV) out site .pytest_cache .hypothesis build
	find swftools -name '_*.c' -o -name '*.so' | xargs rm -f

# Rebuild the example archive (tests fail when it is stale: tests/test_release.py).
example-archive: $(BIN)/swftools
	chmod 600 archive/example-key.txt
	$(BIN)/swftools release $(SAMPLE) --out archive/example --version 1.0.0 \
	  --settings archive/release-settings.example.json --key-file archive/example-key.txt --force

# Screenshots of the example archive's page at 1280 and 390 px (README shows one); needs Chromium.
screenshots: $(BIN)/swftools
	$(BIN)/python -m tests.browser_support archive/example/index.html archive/screenshots

# The documentation site, offline, in strict mode (a broken link or anchor, or a docstring the API
# reference cannot read, fails); read it with `python -m http.server -d site`. CI builds it too.
docs: $(BIN)/swftools
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site
