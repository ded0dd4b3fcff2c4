#ifndef CATOLL_TEST_PARALLELISM_H
#define CATOLL_TEST_PARALLELISM_H

/// The number of test cases Swift Testing runs at once in this process, as set before the runner
/// read its environment (see parallelism.c).
int atoll_test_parallelization_width(void);

#endif
