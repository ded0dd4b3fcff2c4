// The value types apps name directly come with `import Atoll`, as they do with RealmSwift.
@_exported import struct AtollCore.ObjectId
@_exported import struct AtollCore.Decimal128
// The schema as `realm.schema` shows it, under realm-swift's names (see Schema+Realm.swift).
@_exported import struct AtollCore.Schema
@_exported import struct AtollCore.ObjectSchema
@_exported import struct AtollCore.Property
@_exported import enum AtollCore.PropertyType
// Geospatial queries (`$0.location.geoWithin(circle)`), under realm-swift's names.
@_exported import struct AtollCore.GeoPoint
@_exported import struct AtollCore.GeoBox
@_exported import struct AtollCore.GeoCircle
@_exported import struct AtollCore.GeoPolygon
@_exported import struct AtollCore.Distance
@_exported import struct AtollCore.GeoError
