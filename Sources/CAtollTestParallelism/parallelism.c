// Bounds how many test cases Swift Testing runs at once in the test process.
//
// By default Swift Testing starts every test case together. Atoll's suite has about a thousand,
// several hundred of which start a sync server and real clients on loopback; all at once on a
// two-core machine they starve each other until request and connect timeouts fire (the failures
// are load, not bugs, and a different set each run). Swift Testing reads the width from
// SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH when its entry point runs; this constructor runs
// before `main`, so a plain `swift test` is bounded too. A value already in the environment wins.
//
// Most test cases wait on the network rather than compute, so the width is a few times the core
// count, at least 12 (measured on two cores: 1,000 tests pass in ~215 s at 12, against ~260 s and
// a dozen timeouts unbounded).

#include "CAtollTestParallelism.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const widthVariable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH";

__attribute__((constructor))
static void atoll_bound_test_parallelism(void) {
    if (getenv(widthVariable) != NULL) return;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long width = cores > 0 ? cores * 4 : 12;
    if (width < 12) width = 12;
    if (width > 64) width = 64;
    char value[24];
    snprintf(value, sizeof value, "%ld", width);
    setenv(widthVariable, value, 0);
}

int atoll_test_parallelization_width(void) {
    const char *value = getenv(widthVariable);
    return value == NULL ? 0 : atoi(value);
}
