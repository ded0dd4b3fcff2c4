#!/bin/sh
# Compiles and runs gen_sync (synced-realm fixtures: a real sync client history, written with no
# server) against a realm-core build made beforehand with -DREALM_ENABLE_SYNC=ON (README.md).
#   REALM_SRC=<realm-core source> REALM_BUILD=<its sync-enabled build folder> ./build_sync.sh <output folder>
set -eu
: "${REALM_SRC:?set REALM_SRC to a realm-core source tree}"
: "${REALM_BUILD:?set REALM_BUILD to its cmake build folder, configured with -DREALM_ENABLE_SYNC=ON}"
out=${1:?give the output folder}
cd "$(dirname "$0")"
g++ -std=c++17 -O1 -DNDEBUG -DREALM_ENABLE_SYNC=1 -DREALM_HAVE_EPOLL=1 -I"$REALM_SRC/src" -I"$REALM_BUILD/src" gen_sync.cpp \
  -o /tmp/atoll-realm-fixture-gen-sync \
  "$REALM_BUILD/src/realm/object-store/librealm-object-store.a" "$REALM_BUILD/src/realm/parser/librealm-parser.a" \
  "$REALM_BUILD/src/realm/sync/librealm-sync.a" "$REALM_BUILD/src/realm/librealm.a" -lssl -lcrypto -lz -lpthread
mkdir -p "$out"
setarch "$(uname -m)" -R /tmp/atoll-realm-fixture-gen-sync "$out"
