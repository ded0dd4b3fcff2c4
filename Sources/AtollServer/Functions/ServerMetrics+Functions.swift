extension ServerMetrics {
    /// Counts one function webhook call by how it ended: `result`, `error` (the function threw),
    /// `timeout`, `failed` (unreachable, too large an answer, not 2xx or not the protocol's JSON).
    package func countFunctionCall(outcome: String) {
        registry.makeCounter(
            descriptor: Self.name("function_calls", unit: "total", help: "Function webhook calls, by outcome."),
            labels: [("outcome", outcome)]
        ).increment()
    }
}
