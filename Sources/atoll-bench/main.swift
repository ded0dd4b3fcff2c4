print("atoll-bench: see issue #2")
