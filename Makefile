.PHONY: start stop test test-fast fuzz-api

# Bootstrap this machine, then run benchdash with a demo MariaDB target in the background.
start:
	scripts/start

# Stop what `make start` started (the shared PostgreSQL and Redis keep running).
stop:
	scripts/stop

# Bootstrap, then the test suite in parallel beside lint and types; PYTEST_ARGS go to pytest.
test:
	scripts/test $(PYTEST_ARGS)

# The pure tier alone (docs/testing.md): no bootstrap, no lint, about a minute.
test-fast:
	scripts/test --fast $(PYTEST_ARGS)

# The long schemathesis run against the API (every check, every phase, ~10,000 cases); its
# figures go to bench/results/schema_fuzz.json. FUZZ_EXAMPLES: cases per operation.
fuzz-api:
	scripts/bootstrap && . var/bootstrap.env && .venv/bin/python bench/schema_fuzz.py --max-examples $(or $(FUZZ_EXAMPLES),240)
