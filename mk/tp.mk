# mk/tp.mk - build steps of the trace processor (src/tp, tests/tp, fuzz).
#
# The trace processor links SQLite and zlib; the importer has a libFuzzer
# target (clang only): `make fuzz` builds build-fuzz/fuzz-importer, and
# `make fuzz-run FUZZ_SECONDS=60` runs it over tests/fuzz/corpus/importer.

LDLIBS_LIB += -lsqlite3 -lz
