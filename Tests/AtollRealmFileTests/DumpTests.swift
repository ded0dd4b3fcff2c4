import AtollRealmFile
import Foundation
import Testing

@Test(.enabled(if: ProcessInfo.processInfo.environment["REALMFILE_DUMP"] != nil))
func dumpFixtures() throws {
    for name in Fixtures.all {
        print("=== \(name)")
        do {
            let file = try Fixtures.open(name)
            print("format \(file.formatVersion) schema \(String(describing: file.schemaVersion))")
            for table in file.tables {
                print("  table \(table.name) kind \(table.kind) pk \(table.primaryKey ?? "-") count \((try? table.objectCount()) ?? -1)")
                for column in table.columns {
                    print("    \(column.name): \(column.type) \(column.collection) nullable=\(column.isNullable) indexed=\(column.isIndexed) target=\(column.targetTable ?? "-")")
                }
                let started = ContinuousClock.now
                defer { print("    read in \(ContinuousClock.now - started)") }
                do {
                    var cursor = table.objects()
                    var n = 0
                    while let object = try cursor.next() {
                        if n < 3 || n % 5000 == 0 { print("    #\(object.key) bl=\(object.backlinkCount) \(zip(object.columnNames, object.values).map { "\($0)=\($1)" }.joined(separator: ", "))") }
                        n += 1
                    }
                    print("    (\(n) objects)")
                } catch { print("    ERROR \(error)") }
            }
        } catch { print("  ERROR \(error)") }
    }
}
