#!/usr/bin/env python3
"""Writes docs/from-realm.md's table of realm-swift's API (the 247 items of the filed inventory,
Tools/realm-api/inventory-2026-11-27.tsv) with each item's status now and where it is tested.
Run from the repository's root after changing `now` below: `python3 Tools/realm-api/table.py`."""
import csv, re, sys

INVENTORY = "Tools/realm-api/inventory-2026-11-27.tsv"
DOC = "docs/from-realm.md"
START, END = "<!-- api-table:start -->", "<!-- api-table:end -->"

# Where each group of items is exercised, for the items that were ✔ at filing.
GROUP_TESTS = {
    "Realm & configuration & files & migration": "AtollTests: ConfigurationTests, RealmFilesTests, MigrationTests; AppCompatibilityTests: MigrationsApp, FilesAndErrorsApp",
    "Object / EmbeddedObject / AsymmetricObject / @Persisted": "AtollTests: StoreTests, DynamicAPITests, KeyValueCodingTests, CodableTests; AppCompatibilityTests: ModelCustomisationApp",
    "Collections": "AtollTests: RealmCollectionTests, ValueCollectionTests, MapCollectionTests, LinkingObjectsTests",
    "Queries": "AtollTests: TypedQueryTests, TypedQueryAdditionsTests, QuerySQLAgreementTests; AppCompatibilityTests: QueriesApp",
    "Notifications & threading": "AtollTests: NotificationTests, KeyPathObservationTests, ThreadingTests, ThreadConfinedTests, ActorPatternTests",
    "App, users, credentials, auth providers": "AtollTests: AppTests, EmailPasswordAuthTests, UserIdentityTests, CustomUserDataTests; AppCompatibilityTests: AccountsApp, IdentitiesApp",
    "Sync": "AtollTests: SyncTests, FlexibleSyncTests, SubscriptionTests, SyncSessionTests, ClientResetTests; SeedSampleTests",
    "Errors": "AtollTests: ErrorTests, SyncErrorTests, RealmErrorShapeTests; AppCompatibilityTests: ErrorCodesApp",
    "Combine publishers": "AtollTests: CombineTests",
    "SwiftUI property wrappers": "SwiftUIShellTests; AtollTests: SwiftUIStorageTests",
}

# Items whose status changed since filing: item number (1-based, as in the inventory) → (status, test).
NOW = {
    13: ("✔", "AppCompatibilityTests: ErrorCodesApp (Configuration(syncConfiguration:))"),
    22: ("✔", "AppCompatibilityTests: VersionLimitAndAuthHeaderApp.aWriteThatWouldHoldTooManyVersionsFails"),
    44: ("✔", "AppCompatibilityTests: LegacyPrimaryKeyApp"),
    52: ("✔", "AppCompatibilityTests: APIGapsApp.dynamicMapsHoldOptionalObjects"),
    61: ("✔", "AtollTests: SwiftUIStorageTests.collectionsAreEqualWhenTheyAreTheSameCollection"),
    64: ("✔", "AppCompatibilityTests: ListEditingApp"),
    65: ("✔", "AtollTests: SwiftUIStorageTests.listMoveFromOffsetsMatchesSwiftUIsArrayMove, boundCollectionsEditInWritesWithFrozenArguments"),
    57: ("✔", "AtollTests: RealmAPIShapeTests (exhaustive switch); AtollCoreTests: ChangesetEncodingTests.aLinkingObjectsColumnFromAPeerIsRejected"),
    66: ("✔", "AppCompatibilityTests: ListEditingApp"),
    71: ("✔", "AppCompatibilityTests: MapIterationApp"),
    90: ("✔", "AppCompatibilityTests: APIGapsApp.typedSortIndexMatchingAndColumnStringComparisons"),
    98: ("✔", "AtollTests: CustomPersistableTests.typedQueriesCompareThePersistedValue"),
    103: ("✔", "AppCompatibilityTests: APIGapsApp.typedSortIndexMatchingAndColumnStringComparisons"),
    108: ("✔", "AppCompatibilityTests: APIGapsApp.typedSortIndexMatchingAndColumnStringComparisons"),
    110: ("✔", "AppCompatibilityTests: QueriesApp (GeoBox, GeoCircle, `IN %@`)"),
    111: ("✔", "AppCompatibilityTests: QueriesApp; AtollTests: TypedQueryAdditionsTests.invalidShapesAreTypedErrors"),
    160: ("✔", "AppCompatibilityTests: APIGapsApp.partitionValuesAsBSONAndTheManualHandlersSignature"),
    162: ("✔", "AtollTests: CustomUserDataTests; AppCompatibilityTests: AccountsApp"),
    173: ("✔", "AppCompatibilityTests: APIGapsApp.partitionValuesAsBSONAndTheManualHandlersSignature"),
    177: ("✔", "AppCompatibilityTests: APIGapsApp; AtollTests: SubscriptionTests"),
    189: ("✔", "AppCompatibilityTests: ErrorCodesApp (exhaustive switch over State)"),
    198: ("✔", "AppCompatibilityTests: APIGapsApp (a named ErrorReportingBlock); AtollTests: SyncErrorTests"),
    141: ("✔", "AppCompatibilityTests: NetworkTransportApp.everyAppRequestGoesThroughTheConfiguredTransport"),
    204: ("✔", "AppCompatibilityTests: VersionLimitAndAuthHeaderApp.requestsCarryTheTokenInTheNamedHeader"),
    **{n: ("✔", "SwiftUIShellTests (the wrappers against the SwiftUI stand-in); AtollTests: SwiftUIStorageTests") for n in range(207, 221)},
    216: ("✔", "AtollTests: SwiftUIStorageTests.asyncOpenFollowsTheAppsUser; SwiftUIShellTests (compiled)"),
    217: ("✔", "AtollTests: SwiftUIStorageTests.autoOpenOpensTheLocalFileWhenTheServerIsGone; SwiftUIShellTests (compiled)"),
    218: ("✔", "AtollTests: SwiftUIStorageTests.asyncOpenFollowsTheAppsUser"),
    221: ("✔", "AtollTests: CombineTests.objectKeyIdentifiableIdsAreStablePerObjectAndDistinctPerUnmanagedObject"),
    **{n: ("✔", "AtollTests: CombineTests") for n in range(222, 231)},
    231: ("✔", "AppCompatibilityTests: CombineApp.loginFutureAppPublisherAndAFrozenCollectionPublisher"),
    232: ("✔", "AtollTests: CombineTests; AppCompatibilityTests: CombineApp (compiled and run)"),
    233: ("✔", "AppCompatibilityTests: CombineApp"),
    234: ("✔", "AppCompatibilityTests: CombineApp"),
    235: ("✔", "AtollTests: SyncSurfaceTests.aSessionsPublisherForItsStateStartsWithTheValueNowAndFollowsIt (Foundation's on Apple platforms)"),
    243: ("✔", "AppCompatibilityTests: CatchPatternsApp"),
    244: ("✔", "AppCompatibilityTests: ErrorCodesApp"),
    245: ("✔", "AppCompatibilityTests: CatchPatternsApp"),
    246: ("✔", "AtollTests: CompensatingWriteTests (primaryKey is an AnyRealmValue)"),
    247: ("✔", "AppCompatibilityTests: ErrorCodesApp"),
    57: ("✔", "AtollTests: RealmAPIShapeTests (exhaustive switch); AtollCoreTests: ChangesetEncodingTests.aLinkingObjectsColumnFromAPeerIsRejected"),
    150: ("✔", "AppCompatibilityTests: FunctionsApp; AtollTests: FunctionsTests.aFunctionCredentialLogsInTheSameUserEachTime"),
    166: ("✔", "AppCompatibilityTests: FunctionsApp; AtollTests: FunctionsTests; AtollServerTests: FunctionCallTests"),
    99: ("✔", "AtollTests: MixedSubscriptQueryTests (SQL and the server's evaluator)"),
    148: ("✔", "AtollTests: OAuthCredentialsTests.facebookAndGoogleAuthCodeLoginsAndLinks; AtollServerTests: OAuthLoginTests (against a loopback Graph API and token endpoint); AtollCommandTests: AppImportTests.facebookAndGoogleProvidersMapWithTheSecretsLeftToTheOperator"),
    167: ("✔", "over the app's flexible-sync data, with its rules (docs/from-atlas.md §3); AppCompatibilityTests: RemoteDataApp; AtollServerTests: RemoteDataAccessTests; AtollCoreTests: RemoteCollectionTests"),
}

# Why the items left are not ✔ (docs/from-realm.md says more).
WHY = {
    23: "the Events API is not implemented",
    45: "needs Objective-C's runtime accessors, absent on Linux",
    46: "legacy property wrappers of `@objc` models",
    83: "`filter(NSPredicate)` on Results and the wrappers' `filter:` exist on Apple platforms (from predicateFormat); other NSPredicate overloads do not",
    168: "no push notifications service",
    171: "Apple-only helpers; not built",
}

def main():
    rows = list(csv.reader(open(INVENTORY, encoding="utf-8"), delimiter="\t"))[1:]
    lines = ["| # | group | item | status | tested by |", "|---|---|---|---|---|"]
    count = {"✔": 0, "~": 0, "✘": 0}
    for number, (group, item, status, evidence) in enumerate(rows, start=1):
        status, test = NOW.get(number, (status, GROUP_TESTS[group] if status == "✔" else ""))
        if status != "✔":
            test = WHY.get(number, evidence)
        count[status] += 1
        cell = lambda s: s.replace("|", "\\|")
        lines.append(f"| {number} | {cell(group)} | {cell(item)} | {status} | {cell(test)} |")
    total = len(rows)
    summary = (f"{count['✔']} of {total} items ✔ ({100 * count['✔'] / total:.1f} %), {count['~']} partial (~), "
               f"{count['✘']} missing (✘).")
    doc = open(DOC, encoding="utf-8").read()
    block = f"{START}\n{summary}\n\n" + "\n".join(lines) + f"\n{END}"
    if START in doc:
        doc = re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: block, doc, flags=re.S)
    else:
        doc = doc.rstrip() + "\n\n## realm-swift's API, item by item\n\nThe items of realm-swift 10.54's public API that apps use " \
              "(an inventory made when issue 23 was filed), with their status in Atoll and the tests that show it. " \
              "`Tools/realm-api/table.py` writes this table.\n\n" + block + "\n"
    open(DOC, "w", encoding="utf-8").write(doc)
    print(summary)

if __name__ == "__main__":
    main()
