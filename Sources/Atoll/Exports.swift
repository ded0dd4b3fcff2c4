// The value types apps name directly come with `import Atoll`, as they do with RealmSwift.
@_exported import struct AtollCore.ObjectId
@_exported import struct AtollCore.Decimal128
// The schema as `realm.schema` shows it, under realm-swift's names (see Schema+Realm.swift).
@_exported import struct AtollCore.Schema
@_exported import struct AtollCore.ObjectSchema
@_exported import struct AtollCore.Property
@_exported import enum AtollCore.PropertyType
