// The value types apps name directly come with `import Atoll`, as they do with RealmSwift.
@_exported import struct AtollCore.ObjectId
@_exported import struct AtollCore.Decimal128
