/// ``ServerSchema`` rendered as each store's SQL, one migration step at a time.
extension ServerSchema {
    static func steps(for store: Store) -> [Step] {
        switch store {
        case .sqlite: sqliteSteps
        case .postgres: postgresSteps
        }
    }

    /// What step `step` of `store` runs, in order: the tables it creates, the columns it adds to
    /// older tables, its data statements, then its indexes.
    static func statements(for store: Store, step: Int) -> [String] {
        var statements: [String] = []
        for table in tables {
            guard let created = table.since.step(in: store) else { continue }
            if created == step { statements.append(createTable(table, in: store)) }
        }
        for table in tables {
            guard let created = table.since.step(in: store), created < step else { continue }
            for column in columns(of: table, in: store) where column.since?.step(in: store) == step {
                statements.append("ALTER TABLE \(table.name) ADD COLUMN \(definition(of: column, in: table, store: store))")
            }
        }
        statements += steps(for: store).first { $0.number == step }?.data ?? []
        for table in tables where table.since.step(in: store) != nil {
            for index in table.indexes where index.since.step(in: store) == step {
                var sql = "CREATE INDEX \(index.name) ON \(table.name)(\(index.columns.joined(separator: ", ")))"
                if let condition = index.condition { sql += " WHERE \(condition)" }
                statements.append(sql)
            }
        }
        return statements
    }

    /// `table`'s columns in `store`, in that store's order.
    static func columns(of table: Table, in store: Store) -> [Column] {
        let present = table.columns.filter { column in
            column.since.map { $0.step(in: store) != nil } ?? true
        }
        guard store == .sqlite, let order = table.sqliteColumnOrder else { return present }
        return order.compactMap { name in present.first { $0.name == name } }
    }

    /// The step of `store` that made `column` of `table`.
    static func step(of column: Column, in table: Table, store: Store) -> Int? {
        column.since.map { $0.step(in: store) } ?? table.since.step(in: store)
    }

    static func createTable(_ table: Table, in store: Store) -> String {
        let created = table.since.step(in: store)
        var parts = columns(of: table, in: store)
            .filter { step(of: $0, in: table, store: store) == created }
            .map { definition(of: $0, in: table, store: store) }
        if table.primaryKey.count > 1 { parts.append("PRIMARY KEY (\(table.primaryKey.joined(separator: ", ")))") }
        for columns in table.unique { parts.append("UNIQUE (\(columns.joined(separator: ", ")))") }
        var sql = "CREATE TABLE \(table.name) (\(parts.joined(separator: ", ")))"
        if store == .sqlite, table.withoutRowID { sql += " WITHOUT ROWID" }
        return sql
    }

    /// `name TYPE` and its constraints, as `CREATE TABLE` and `ADD COLUMN` take them.
    static func definition(of column: Column, in table: Table, store: Store) -> String {
        var sql = "\(column.name) \(self.sql(column.type, in: store))"
        let primaryKey = table.primaryKey == [column.name]
        switch store {
        case .sqlite:
            if primaryKey {
                sql += column.identity ? " PRIMARY KEY AUTOINCREMENT" : " PRIMARY KEY NOT NULL"
            } else if !column.nullable {
                sql += " NOT NULL"
            }
        case .postgres:
            if column.identity { sql += " GENERATED ALWAYS AS IDENTITY" }
            if primaryKey {
                sql += " PRIMARY KEY"
            } else if !column.nullable, !column.identity {
                sql += " NOT NULL"
            }
        }
        if let references = column.references { sql += " REFERENCES \(references) ON DELETE CASCADE" }
        if let value = column.defaultValue { sql += " DEFAULT \(self.sql(value, in: store))" }
        return sql
    }

    static func sql(_ type: ColumnType, in store: Store) -> String {
        switch (type, store) {
        case (.text, _): "TEXT"
        case (.double, .sqlite): "DOUBLE"
        case (.double, .postgres): "DOUBLE PRECISION"
        case (.bool, _): "BOOLEAN"
        case (.int16, .sqlite), (.int32, .sqlite), (.int64, .sqlite): "INTEGER"
        case (.int16, .postgres): "SMALLINT"
        case (.int32, .postgres): "INTEGER"
        case (.int64, .postgres): "BIGINT"
        case (.bytes, .sqlite): "BLOB"
        case (.bytes, .postgres): "BYTEA"
        case (.timestamp, .sqlite): "TEXT"
        case (.timestamp, .postgres): "TIMESTAMPTZ"
        }
    }

    static func sql(_ value: Default, in store: Store) -> String {
        switch (value, store) {
        case (.bool(let value), .sqlite): value ? "1" : "0"
        case (.bool(let value), .postgres): value ? "TRUE" : "FALSE"
        case (.int(let value), _): "\(value)"
        case (.now, .sqlite): "CURRENT_TIMESTAMP"
        case (.now, .postgres): "now()"
        }
    }
}
