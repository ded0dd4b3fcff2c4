@testable import AtollServer
import Testing

/// What an app's configuration accepts as a permission rule: anything that parses once its
/// `%user.…` placeholders stand for values — single ones or lists, which only a user's data tells.
@Suite struct RuleValidationTests {
    @Test(arguments: [
        "true", "FALSE", "owner == %user.id",
        "team IN %user.custom_data.teams",
        "owner == %user.id OR team IN %user.custom_data.teams",
        "%user.id IN members AND 'custom-token' IN %user.identities.provider_type",
        "NOT (team IN %user.custom_data.teams) AND level >= %user.custom_data.level",
    ])
    func rulesWithSingleAndListPlaceholdersAreAccepted(_ rule: String) {
        #expect(ServerConfiguration.App.ruleParses(rule))
    }

    @Test(arguments: ["owner ==", "team IN IN %user.custom_data.teams", "%user.id ==== owner", "drop table"])
    func textThatIsNotARuleIsRefused(_ rule: String) {
        #expect(!ServerConfiguration.App.ruleParses(rule))
    }
}
