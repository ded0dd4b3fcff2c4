/// How deeply JSON text nests, found without parsing it: a body nested thousands deep is refused
/// before a recursive decoder could run out of stack on it.
enum JSONNesting {
    /// The deepest nesting accepted: BSON's own limit in MongoDB and App Services.
    static let maxDepth = 100

    /// Whether `bytes` nest arrays and objects at most `maxDepth` deep (strings are skipped,
    /// escapes included). Malformed text is left for the decoder to refuse.
    ///
    /// - Complexity: O(*n*) in the bytes, O(1) memory.
    static func isWithin(_ bytes: some Sequence<UInt8>, maxDepth: Int = maxDepth) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > maxDepth { return false }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return true
    }
}
