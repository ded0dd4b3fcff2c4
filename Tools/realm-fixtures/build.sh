#!/bin/sh
# Compiles the fixture generator against a realm-core build made beforehand, outside this
# repository and outside CI (README.md says how), then runs it.
#   REALM_SRC=<realm-core source> REALM_BUILD=<its build folder> ./build.sh <output folder>
set -eu
: "${REALM_SRC:?set REALM_SRC to a realm-core source tree}"
: "${REALM_BUILD:?set REALM_BUILD to its cmake build folder}"
out=${1:?give the output folder}
cd "$(dirname "$0")"
g++ -std=c++17 -O1 -I"$REALM_SRC/src" -I"$REALM_BUILD/src" gen.cpp -o /tmp/atoll-realm-fixture-gen \
  "$REALM_BUILD/src/realm/object-store/librealm-object-store.a" "$REALM_BUILD/src/realm/parser/librealm-parser.a" \
  "$REALM_BUILD/src/realm/librealm.a" -lcrypto -lz -lpthread
mkdir -p "$out"
# ASLR off: realm-core leaves array padding uninitialised, which otherwise differs run to run.
setarch "$(uname -m)" -R /tmp/atoll-realm-fixture-gen "$out"
setarch "$(uname -m)" -R /tmp/atoll-realm-fixture-gen --tasks-w1 "$out"
setarch "$(uname -m)" -R /tmp/atoll-realm-fixture-gen --synced-tasks "$out"
gzip -9 -k -f "$out/tasks_w1_100k.realm"
