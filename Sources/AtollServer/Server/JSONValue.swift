import AtollAdminAPI

/// Any JSON value: what the server passes on without reading it (a reset function's arguments) and
/// a user's custom data in an access token. The admin API's `AdminAPI.JSON`, one type for both.
///
/// ```swift
/// let arguments = try JSONDecoder().decode([JSONValue].self, from: Data(#"[1, "two", {"three": null}]"#.utf8))
/// ```
package typealias JSONValue = AdminAPI.JSON
