extension Realm {
    /// Opens the realm of the default configuration (`Realm()` spelled out).
    public static func defaultRealm() throws -> Realm { try Realm(configuration: .defaultConfiguration) }
}
