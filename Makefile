# gowrt build and test entry points. `make test` is the command CI runs.
.PHONY: test test-host test-mips fmt-check vet

test:
	./scripts/test.sh

