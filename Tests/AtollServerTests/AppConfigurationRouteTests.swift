import AtollServer
import Foundation
import JWTKit
import Testing

/// `PUT /api/admin/v1/apps/:app/configuration` (issue 24 §1, `atoll apps import` against a running
/// server): an app added at run time is served like one of the configuration file (auth, rules),
/// survives a restart, is refused typed when its configuration is bad, never echoes its secrets,
/// and leaves every other app alone.
@Suite("Apps configured through the admin API")
struct AppConfigurationRouteTests {
    static let jwtKey = "the runtime app's own identity service signs with this"

    static func path(_ app: String, replace: Bool? = nil) -> String {
        "/api/admin/v1/apps/\(app)/configuration" + (replace.map { "?replace=\($0)" } ?? "")
    }

    /// An app with custom JWT logins only, whose users read and write their own objects.
    static func body(id: String = "runtime-app", anonymous: Bool = false, key: String = jwtKey, extra: String = "") -> String {
        """
        {"id": "\(id)", "developmentMode": false,
         "authProviders": {"anon-user": \(anonymous), "local-userpass": false, "api-key": false, "custom-token": true},
         "customJWT": {"algorithm": "HS256", "key": "\(key)"},
         "syncKind": "flexible", "queryableFields": ["owner"],
         "permissions": [{"type": "Task", "read": "owner == %user.id", "write": "owner == %user.id"}]\(extra)}
        """
    }

    static func production(_ configure: @escaping (inout ServerConfiguration) -> Void = { _ in }) -> ServerConfiguration {
        TestServer.configuration {
            $0.developmentMode = false
            configure(&$0)
        }
    }

    static func jwt(sub: String, key: String = jwtKey) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
        return try await keys.sign(CustomJWTTests.Claims(sub: SubjectClaim(value: sub), exp: ExpirationClaim(value: Date().addingTimeInterval(600))))
    }

    static func jwtLogin(_ server: TestServer, app: String = "runtime-app", sub: String = "frodo") async throws -> HTTP.Answer {
        try await server.http.logIn(app: app, provider: "custom-token", json: ["token": try await jwt(sub: sub)])
    }

    @Test func anAppPutAtRunTimeIsServedAndSurvivesARestart() async throws {
        try await withServer(Self.production()) { server in
            let admin = server.running.adminKey
            #expect(try await Self.jwtLogin(server).errorCode == "AppNotFound")

            let created = try await server.http.send("PUT", Self.path("runtime-app"), bearer: admin, body: Self.body())
            #expect(created.status == 201, "\(created.text)")
            #expect(created.object["status"] as? String == "created")
            #expect(!created.text.contains(Self.jwtKey), "the answer echoes the JWT key")

            #expect(try await Self.jwtLogin(server).status == 200)
            #expect(try await server.http.logIn(app: "runtime-app", provider: "anon-user").errorCode == "AuthProviderDisabled")

            // Kept in the store, whose file is the server's user's alone: it holds the key.
            #expect(try await server.running.coordinator.store.runtimeApp(id: "runtime-app")?.configuration.contains(Self.jwtKey) == true)
            for name in ["atoll.sqlite", "atoll.sqlite-wal"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: server.dataFolder.appendingPathComponent(name).path)
                #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(name)")
            }
            #expect(!FileManager.default.fileExists(atPath: server.dataFolder.appendingPathComponent("apps").path))

            let restarted = try await server.restarted()
            #expect(try await Self.jwtLogin(restarted).status == 200)
            let again = try await restarted.http.send("PUT", Self.path("runtime-app"), bearer: admin, body: Self.body())
            #expect(again.object["status"] as? String == "unchanged")
        }
    }

    @Test func theSameConfigurationIsUnchangedAndAnotherOneNeedsReplace() async throws {
        try await withServer(Self.production()) { server in
            let admin = server.running.adminKey
            #expect(try await server.http.send("PUT", Self.path("runtime-app"), bearer: admin, body: Self.body()).status == 201)
            let same = try await server.http.send("PUT", Self.path("runtime-app"), bearer: admin, body: Self.body())
            #expect(same.status == 200)
            #expect(same.object["status"] as? String == "unchanged")

            let other = try await server.http.send("PUT", Self.path("runtime-app"), bearer: admin, body: Self.body(anonymous: true))
            #expect(other.status == 409)
            #expect(other.errorCode == "AppExists")
            #expect(try await server.http.logIn(app: "runtime-app", provider: "anon-user").errorCode == "AuthProviderDisabled")

            let replaced = try await server.http.send("PUT", Self.path("runtime-app", replace: true), bearer: admin, body: Self.body(anonymous: true))
            #expect(replaced.status == 200)
            #expect(replaced.object["status"] as? String == "replaced")
            #expect(try await server.http.logIn(app: "runtime-app", provider: "anon-user").status == 200)
            // The new key replaced the old one.
            let newKey = "another key of the identity service, 32 bytes or more"
            _ = try await server.http.send("PUT", Self.path("runtime-app", replace: true), bearer: admin, body: Self.body(key: newKey))
            #expect(try await Self.jwtLogin(server).errorCode == "InvalidCredentials")
            let login = try await server.http.logIn(app: "runtime-app", provider: "custom-token", json: ["token": try await Self.jwt(sub: "frodo", key: newKey)])
            #expect(login.status == 200)
        }
    }

    /// `GET` answers what the server serves, secrets redacted, for runtime apps and those of the
    /// configuration file; the redacted copy sent back as it is, is refused (its "secret" would
    /// be the placeholder everyone can read).
    @Test func theConfigurationIsShownWithItsSecretsRedactedAndCannotBeSentBackRedacted() async throws {
        let webhookSecret = "the functions' webhook secret, long enough"
        try await withServer(Self.production {
            $0.apps = [ServerConfiguration.App(id: "from-file", customJWT: .init(algorithm: .hs256, key: "the file app's own HS256 key, 32+ bytes"), developmentMode: false)]
        }) { server in
            let admin = server.running.adminKey
            let extra = #", "functions": {"webhookSecret": "\#(webhookSecret)", "authenticationURL": "http://127.0.0.1:9/auth"}"#
            #expect(try await server.http.send("PUT", Self.path("runtime-app"), bearer: admin, body: Self.body(extra: extra)).status == 201)
            let shown = try await server.http.send("GET", Self.path("runtime-app"), bearer: admin)
            #expect(shown.status == 200, "\(shown.text)")
            #expect(shown.object["origin"] as? String == "runtime")
            #expect((shown.object["generation"] as? NSNumber) != nil)
            #expect(!shown.text.contains(Self.jwtKey) && !shown.text.contains(webhookSecret), "a secret was shown: \(shown.text)")
            let configuration = try #require(shown.object["configuration"] as? [String: Any])
            #expect((configuration["customJWT"] as? [String: Any])?["key"] as? String == "<secret>")
            #expect((configuration["permissions"] as? [[String: Any]])?.first?["read"] as? String == "owner == %user.id")

            let file = try await server.http.send("GET", Self.path("from-file"), bearer: admin)
            #expect(file.object["origin"] as? String == "configurationFile")
            #expect(!file.text.contains("the file app's own HS256 key"))
            #expect(try await server.http.send("GET", Self.path("nowhere"), bearer: admin).errorCode == "AppNotFound")
            #expect(try await server.http.send("GET", Self.path("runtime-app")).status == 401, "the admin key is required")

            // Sent back redacted: refused, naming the field; the app keeps its real key.
            let back = try JSONSerialization.data(withJSONObject: configuration)
            let replaced = try await server.http.send("PUT", Self.path("runtime-app", replace: true), bearer: admin,
                                                      body: String(decoding: back, as: UTF8.self))
            #expect(replaced.status == 400 && replaced.errorCode == "InvalidAppConfiguration", "\(replaced.text)")
            #expect(replaced.text.contains("customJWT.key"), "\(replaced.text)")
            #expect(try await Self.jwtLogin(server).status == 200)
        }
    }

    @Test func anAppOfTheConfigurationFileIsReadOnly() async throws {
        try await withServer(Self.production { $0.apps = [ServerConfiguration.App(id: "declared", developmentMode: false)] }) { server in
            let answer = try await server.http.send("PUT", Self.path("declared", replace: true), bearer: server.running.adminKey,
                                                    body: Self.body(id: "declared", anonymous: true))
            #expect(answer.status == 409)
            #expect(answer.errorCode == "AppReadOnly")
            #expect(try await server.http.anonymousLogin(app: "declared").user_id.isEmpty == false)
        }
    }

    /// Every hostile body is refused with a typed error before anything changes; the server and
    /// its other apps carry on.
    @Test func hostileConfigurationsAreRefusedTyped() async throws {
        try await withServer(Self.production { $0.apps = [ServerConfiguration.App(id: "other", developmentMode: false)] }) { server in
            let admin = server.running.adminKey
            let shortKey = "short secret key"
            let cases: [(path: String, body: String, code: String, names: String?)] = [
                (Self.path("runtime-app"), "{\"id\": \"runtime-app\", \"x\": \"" + String(repeating: "a", count: 300 << 10) + "\"}", "InvalidAppConfiguration", "larger"),
                (Self.path("runtime-app"), "{\"id\": \"runtime-app\", ", "InvalidAppConfiguration", nil),
                (Self.path("runtime-app"), "[1, 2, 3]", "InvalidAppConfiguration", nil),
                (Self.path("runtime-app"), #"{"id": "runtime-app", "permissions": "everyone"}"#, "InvalidAppConfiguration", "permissions"),
                (Self.path("runtime-app"), #"{"id": 42}"#, "InvalidAppConfiguration", "id"),
                (Self.path("runtime-app"), #"{"authProviders": {}}"#, "InvalidAppConfiguration", "id"),
                (Self.path("runtime-app"), #"{"id": "runtime-app", "syncKind": "quantum"}"#, "InvalidAppConfiguration", "syncKind"),
                (Self.path("runtime-app"), Self.body(id: "someone-else"), "InvalidAppConfiguration", "path"),
                (Self.path("runtime-app"), Self.body(key: shortKey), "InvalidAppConfiguration", "customJWT.key"),
                (Self.path("runtime-app"), Self.body(extra: #", "functions": {"definitions": {"f": {"url": "file:///etc/passwd"}}}"#), "InvalidAppConfiguration", "functions"),
                (Self.path("runtime-app"), #"{"id": "runtime-app", "developmentMode": false, "permissions": [{"read": "owner == == %user.id"}]}"#, "InvalidAppConfiguration", "permissions[0].read"),
                (Self.path("runtime-app"), #"{"id": "runtime-app", "developmentMode": false, "apple": {"jwksPath": "/etc/passwd", "audience": ["x"]}}"#, "InvalidAppConfiguration", "jwksPath"),
                (Self.path("runtime-app"), "{\"id\": \"runtime-app\", \"permissions\": " + String(repeating: "[", count: 200) + String(repeating: "]", count: 200) + "}", "InvalidAppConfiguration", "nests"),
                (Self.path("runtime-app", replace: nil) + "?replace=maybe", Self.body(), "BadRequest", "replace"),
                (Self.path("..%2F..%2Fetc"), Self.body(id: "../../etc"), "InvalidAppConfiguration", "app id"),
                (Self.path("a%20b"), Self.body(id: "a b"), "InvalidAppConfiguration", "app id"),
                (Self.path("other"), Self.body(id: "other"), "AppReadOnly", nil),
            ]
            for (path, body, code, names) in cases {
                let answer = try await server.http.send("PUT", path, bearer: admin, body: body)
                #expect(answer.errorCode == code, "\(path) \(body.prefix(120)): \(answer.status) \(answer.text.prefix(300))")
                if let names { #expect((answer.object["error"] as? String)?.contains(names) == true, "\(answer.text.prefix(300))") }
                #expect(!answer.text.contains(shortKey) && !answer.text.contains(Self.jwtKey), "an answer echoes a key")
            }
            // Without the admin key: refused before the body is read.
            #expect(try await server.http.send("PUT", Self.path("runtime-app"), body: Self.body()).status == 401)
            // Nothing was created; nothing was written; the other app still serves.
            #expect(try await Self.jwtLogin(server).errorCode == "AppNotFound")
            #expect(try await server.running.coordinator.store.runtimeApps().isEmpty)
            #expect(try await server.http.anonymousLogin(app: "other").user_id.isEmpty == false)
        }
    }

    /// Concurrent PUTs of one app are decided one after the other: one creates, the same
    /// configuration is unchanged, a different one (without replace) is refused.
    @Test func concurrentPutsOfOneAppCreateItOnce() async throws {
        try await withServer(Self.production()) { server in
            let admin = server.running.adminKey
            let http = server.http
            let statuses = try await withThrowingTaskGroup(of: (Int, String?, Bool).self) { group in
                for index in 0..<12 {
                    let anonymous = index % 3 == 0
                    group.addTask {
                        let answer = try await http.send("PUT", Self.path("runtime-app"), bearer: admin, body: Self.body(anonymous: anonymous))
                        return (answer.status, answer.object["status"] as? String ?? answer.errorCode, anonymous)
                    }
                }
                var all: [(Int, String?, Bool)] = []
                for try await answer in group { all.append(answer) }
                return all
            }
            let created = statuses.filter { $0.0 == 201 }
            #expect(created.count == 1, "\(statuses)")
            let winner = try #require(created.first).2
            for (status, outcome, anonymous) in statuses where status != 201 {
                if anonymous == winner {
                    #expect(status == 200 && outcome == "unchanged")
                } else {
                    #expect(status == 409 && outcome == "AppExists")
                }
            }
        }
    }

    /// An app declared in the configuration file and kept in the store: the file wins at
    /// start, and the admin API may not change it.
    @Test func theConfigurationFileWinsOverAKeptCopy() async throws {
        var configuration = Self.production()
        let first = try await AtollServer(configuration: configuration).start()
        #expect(try await HTTP(baseURL: first.baseURL).send("PUT", Self.path("runtime-app"), bearer: first.adminKey, body: Self.body()).status == 201)
        try await first.shutdown()

        configuration.apps = [ServerConfiguration.App(id: "runtime-app", authProviders: .init(anonymous: true), developmentMode: false)]
        let second = try await AtollServer(configuration: configuration).start()
        let http = HTTP(baseURL: second.baseURL)
        #expect(try await http.anonymousLogin(app: "runtime-app").user_id.isEmpty == false)  // the file's providers
        #expect(try await http.logIn(app: "runtime-app", provider: "custom-token", json: ["token": try await Self.jwt(sub: "frodo")]).errorCode
                == "AuthProviderDisabled")
        #expect(try await http.send("PUT", Self.path("runtime-app", replace: true), bearer: second.adminKey, body: Self.body()).errorCode == "AppReadOnly")
        try await second.shutdown()
        try? FileManager.default.removeItem(atPath: configuration.dataDirectory)
    }

    /// A kept copy that cannot be used stops the start, rather than serve the app with the
    /// default (open) settings.
    @Test func aDamagedKeptCopyStopsTheStart() async throws {
        let configuration = Self.production()
        let folder = URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent("apps")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(#"{"id": "runtime-app", "permissions": [{"read": "owner == == 1"}]}"#.utf8).write(to: folder.appendingPathComponent("runtime-app.json"))
        await #expect(throws: ConfigurationError.self) { _ = try await AtollServer(configuration: configuration).start() }
        try Data(#"{"id": "another-app"}"#.utf8).write(to: folder.appendingPathComponent("runtime-app.json"))
        await #expect(throws: ConfigurationError.self) { _ = try await AtollServer(configuration: configuration).start() }
        try? FileManager.default.removeItem(atPath: configuration.dataDirectory)
    }

    /// The apps an older server kept in `<data>/apps` move into the store once, at start: served
    /// as before, the file kept under another name and not read again (a later replacement
    /// through the admin API survives the next restart).
    @Test func appsKeptInTheDataFolderAreImportedIntoTheStoreOnce() async throws {
        let configuration = Self.production()
        let folder = URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent("apps")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("runtime-app.json")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data(Self.body().utf8), attributes: [.posixPermissions: 0o600]))
        try await withServer(configuration) { server in
            #expect(try await Self.jwtLogin(server).status == 200)
            #expect(try await server.running.coordinator.store.runtimeApp(id: "runtime-app") != nil)
            #expect(!FileManager.default.fileExists(atPath: file.path))
            let imported = folder.appendingPathComponent("runtime-app.json.imported")
            #expect((try FileManager.default.attributesOfItem(atPath: imported.path)[.posixPermissions] as? NSNumber)?.intValue == 0o600)

            let replaced = try await server.http.send("PUT", Self.path("runtime-app", replace: true), bearer: server.running.adminKey,
                                                      body: Self.body(anonymous: true))
            #expect(replaced.object["status"] as? String == "replaced")
            let restarted = try await server.restarted()
            #expect(try await restarted.http.logIn(app: "runtime-app", provider: "anon-user").status == 200, "the replacement survived")
            #expect(try await Self.jwtLogin(restarted).status == 200)
        }
    }

    /// The log says which app was configured, never its secrets.
    @Test func theLogNeverHoldsTheSecrets() async throws {
        let capture = LogCapture()
        let server = try await AtollServer(configuration: Self.production(), logger: capture.logger(level: .trace)).start()
        let http = HTTP(baseURL: server.baseURL)
        #expect(try await http.send("PUT", Self.path("runtime-app"), bearer: server.adminKey, body: Self.body()).status == 201)
        _ = try await http.send("PUT", Self.path("runtime-app"), bearer: server.adminKey, body: Self.body(key: "too short"))
        try await server.shutdown()
        #expect(capture.all.contains { $0.text.contains("runtime-app") })
        #expect(!capture.all.contains { $0.text.contains(Self.jwtKey) || $0.text.contains("too short") })
    }
}
