.PHONY: start stop test

# Bootstrap this machine, then run benchdash with a demo MariaDB target in the background.
start:
	scripts/start

# Stop what `make start` started (the shared PostgreSQL and Redis keep running).
stop:
	scripts/stop

# Bootstrap, lint, type-check and run the test suite; PYTEST_ARGS go to pytest.
test:
	scripts/test $(PYTEST_ARGS)
