extension Realm {
    /// What `add(_:update:)` and `create(_:value:update:)` do when an object with the same
    /// primary key exists.
    ///
    /// ```swift
    /// realm.add(task, update: .modified)
    /// ```
    public enum UpdatePolicy: Int, Sendable {
        /// Adding an object whose primary key exists is an error.
        case error = 1
        /// Only properties whose value differs are written (and reported as changed).
        case modified = 3
        /// Every property is written.
        case all = 2
    }
}

/// Internal code may say `UpdatePolicy`; apps say `Realm.UpdatePolicy`, as in realm-swift.
typealias UpdatePolicy = Realm.UpdatePolicy
