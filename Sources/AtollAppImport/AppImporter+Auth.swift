import AtollAppConfig

/// `auth/providers.json` and `auth/custom_user_data.json` → the app's auth providers and custom
/// user data. Every provider the export does not turn on is off; keys stay secrets the operator
/// supplies (the report says which).
extension ImportContext {
    mutating func readAuth() throws(AppImportError) {
        var providers: [(name: String, spec: ExportJSON)] = []
        if let json = try document("auth/providers.json") {
            if let list = json.array {
                providers = list.map { ($0["name"]?.string ?? $0["type"]?.string ?? "?", $0) }
            } else {
                providers = (json.entries ?? []).map { ($0.key, $0.value) }
            }
        }
        // The older layout: one file per provider.
        for path in export.files.keys.sorted() where path.hasPrefix("auth_providers/") && path.hasSuffix(".json") {
            if let json = try document(path) { providers.append((json["name"]?.string ?? path, json)) }
        }
        for (name, spec) in providers {
            let type = spec["type"]?.string ?? name
            let subject = "auth provider \(name)"
            if spec["disabled"]?.bool == true {
                report.add(.mapped, subject, "disabled in the export: off")
                continue
            }
            switch type {
            case "anon-user":
                app.authProviders.anonymous = true
                report.add(.mapped, subject, "anonymous logins on")
            case "api-key":
                app.authProviders.apiKey = true
                report.add(.mapped, subject, "API keys on (keys themselves are not exported: users and servers make new ones)")
            case "local-userpass":
                app.authProviders.emailPassword = true
                readEmailPassword(spec["config"], subject: subject)
            case "custom-token":
                app.authProviders.customToken = true
                let config = spec["config"]
                let algorithm = config?["signingAlgorithm"]?.string ?? "HS256"
                let audience = config?["audience"]?.string ?? config?["audience"]?.array?.compactMap(\.string).first
                let (metadata, metadataItems) = metadataFields(spec["metadata_fields"]?.array ?? [], subject: "\(subject) metadata_fields")
                if config?["useJWKURI"]?.bool == true {
                    report.add(.refused, subject, "keys from a JWK URI: Atoll checks custom JWTs with a configured key; custom-token logins stay off until customJWT is added")
                } else {
                    let audienceText = audience.map { ", \"audience\": \"\($0)\"" } ?? ""
                    let metadataText = metadata.isEmpty ? "" : ", \"metadataFields\": [\(metadata.joined(separator: ", "))]"
                    report.add(.needsAttention, subject, "add \"customJWT\": {\"algorithm\": \"\(algorithm)\", \"key\": <the signing key>\(audienceText)\(metadataText)} to the app: the key is a secret the export does not hold; until then custom-token logins are refused")
                }
                report.items += metadataItems
            case "oauth2-apple", "oauth2-google", "oauth2-facebook":
                readOAuth(type: type, spec: spec, subject: subject)
            case "custom-function":
                let function = spec["config"]?["authFunctionName"]?.string ?? "?"
                report.add(.needsAttention, subject, "logins by the function \(function): set functions.authenticationURL to a webhook that answers {\"id\": <the user's external id>} for a payload, as \(function) returned it; until then custom-function logins are off")
            default:
                report.add(.refused, subject, "\(type) logins are not supported by Atoll; off")
            }
        }
        if providers.isEmpty { report.add(.mapped, "auth", "no auth providers in the export: every provider is off") }
        try readCustomUserData()
    }

    /// A custom JWT's `metadata_fields` as Atoll's `customJWT.metadataFields` entries (JSON text):
    /// claims copied into the user's profile data at each login (`%user.data.<field_name>`), and
    /// the report's line for each field.
    func metadataFields(_ fields: [ExportJSON], subject: String) -> (entries: [String], items: [ImportItem]) {
        var out: [String] = []
        var items: [ImportItem] = []
        var names = Set<String>()
        for (index, field) in fields.enumerated() {
            let path = field["name"]?.string ?? ""
            let name = field["field_name"]?.string ?? path
            let required = field["required"]?.bool ?? false
            let valid = path.utf8.count <= 128 && MongoExpression.isFieldPath(path) && name.utf8.count <= 128
                && MongoExpression.isFieldPath(name) && !name.contains(".") && names.insert(name).inserted && out.count < 32
            guard valid else {
                let consequence = required ? "; it is required: custom-token logins App Services refused without it would be accepted, so leave the provider off until the token's claims are settled" : ""
                items.append(ImportItem(.refused, "\(subject)[\(index)]", "\(MongoExpression.describe(field)): a claim path and a profile field name without dots (at most 32 fields, 128 bytes a name, each name once)\(consequence)"))
                continue
            }
            out.append("{\"name\": \"\(path)\", \"fieldName\": \"\(name)\", \"required\": \(required)}")
            items.append(ImportItem(.mapped, "\(subject)[\(index)]",
                                    "the claim \(path) → the profile's \(name) (%user.data.\(name))\(required ? ", required: a token without it is refused" : "")"))
        }
        return (out, items)
    }

    /// Sign in with Apple, Google and Facebook: the client id comes from the export, the client
    /// secret (`secret_config.clientSecret` names an App Services secret, whose value no export
    /// holds) from the operator's settings; until it is there, the logins that need it are refused.
    mutating func readOAuth(type: String, spec: ExportJSON, subject: String) {
        guard let clientID = spec["config"]?["clientId"]?.string, !clientID.isEmpty, clientID.utf8.count <= 256 else {
            report.add(.refused, subject, "no config.clientId: off")
            return
        }
        let secretName = spec["secret_config"]?["clientSecret"]?.string.map { " (the App Services secret \($0))" } ?? ""
        let profile = spec["metadata_fields"] == nil ? "" : "; metadata_fields: Atoll fills the profile's name, email and picture from what the provider gives"
        switch type {
        case "oauth2-apple":
            app.apple = AppConfig.OpenIDProvider(audience: [clientID])
            report.add(.mapped, subject, "Sign in with Apple for \(clientID): ID tokens checked against Apple's published keys\(profile)")
        case "oauth2-google":
            app.google = AppConfig.OpenIDProvider(audience: [clientID], authCode: .init(clientId: clientID))
            let idTokens = spec["config"]?["openId"]?.bool == true
                ? "ID tokens (Credentials.googleId) checked against Google's published keys"
                : "App Services took server auth codes only; Atoll also takes ID tokens (Credentials.googleId) made for this client id"
            report.add(.mapped, subject, "Google Sign-In for \(clientID): \(idTokens)\(profile)")
            report.add(.needsAttention, "\(subject) server auth codes",
                       "add the client secret\(secretName) with --settings {\"google\": {\"authCode\": {\"clientSecret\": <the OAuth client secret>}}}: the export does not hold it; until then Credentials.google(serverAuthCode:) is refused")
        default:
            guard clientID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                report.add(.refused, subject, "config.clientId is not a Facebook app id: off")
                return
            }
            app.facebook = AppConfig.Facebook(clientId: clientID)
            report.add(.needsAttention, subject,
                       "Facebook app \(clientID): add its app secret\(secretName) with --settings {\"facebook\": {\"clientSecret\": <the Facebook app secret>}}: the export does not hold it; until then Facebook logins are refused\(profile)")
        }
    }

    mutating func readEmailPassword(_ config: ExportJSON?, subject: String) {
        var settings = AppConfig.EmailPassword(confirmation: .automatic)
        if config?["autoConfirm"]?.bool == true {
            report.add(.mapped, subject, "e-mail/password on, accounts confirmed automatically")
        } else if config?["runConfirmationFunction"]?.bool == true {
            settings.confirmation = .function
            let function = config?["confirmationFunctionName"]?.string ?? "?"
            report.add(.needsAttention, subject, "confirmation by the function \(function): set emailPassword.confirmationFunctionURL to a webhook doing what it did")
        } else {
            settings.confirmation = .token
            report.add(.needsAttention, subject, "confirmation by e-mail: set emailPassword.deliveryURL to the webhook that sends the mail (the link was \(config?["emailConfirmationUrl"]?.string ?? "?"))")
        }
        if config?["runResetFunction"]?.bool == true {
            let function = config?["resetFunctionName"]?.string ?? "?"
            report.add(.needsAttention, "\(subject) reset", "password reset by the function \(function): set emailPassword.resetFunctionURL to a webhook doing what it did")
        } else if config?["resetPasswordUrl"] != nil {
            report.add(.needsAttention, "\(subject) reset", "reset e-mails: set emailPassword.deliveryURL to the webhook that sends them (the link was \(config?["resetPasswordUrl"]?.string ?? "?"))")
        }
        app.emailPassword = settings
    }

    mutating func readCustomUserData() throws(AppImportError) {
        let path = "auth/custom_user_data.json"
        guard let json = try document(path), json["enabled"]?.bool == true else { return }
        guard let collection = json["collection_name"]?.string, let field = json["user_id_field"]?.string else {
            report.add(.refused, path, "no collection_name or user_id_field: custom user data stays empty")
            return
        }
        let type = className(ofCollection: collection)
        app.customUserData = AppConfig.CustomUserData(type: type, userIdField: field, partition: nil)
        if app.syncKind == .partition {
            report.add(.needsAttention, path, "\(type).\(field): set customUserData.partition to the partition value holding these objects")
        } else {
            report.add(.mapped, path, "custom user data from \(type) objects whose \(field) is the user's id")
        }
        if let function = json["on_user_creation_function_name"]?.string, !function.isEmpty {
            report.add(.notCarried, "\(path) on_user_creation_function_name", "\(function) ran when a user was created: Atoll calls no function then")
        }
    }
}
