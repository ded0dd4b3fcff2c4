import AtollAppConfig

extension ServerConfiguration.App {
    /// The database name remote access answers to.
    var remoteDatabase: String { remoteAccess.database ?? id }
}
