/// A computed backlink property (a client's `LinkingObjects`): the objects of `originType` whose link
/// `originProperty` points at an object. Backlinks are neither stored nor synced, so they are not part
/// of ``ObjectSchema``; a client passes them to ``QueryExpression/bind(to:in:backlinks:)`` by the type
/// that declares them.
///
/// ```swift
/// let backlinks = ["Task": [ComputedBacklink(name: "assignee", originType: "User", originProperty: "tasks")]]
/// try QueryExpression.parse("assignee.@count > 0").bind(to: "Task", in: schema, backlinks: backlinks)
/// ```
package struct ComputedBacklink: Sendable, Hashable {
    /// The property name on the linked type.
    package var name: String
    package var originType: String
    /// A to-one link, list or set of `originType` pointing at the declaring type.
    package var originProperty: String

    package init(name: String, originType: String, originProperty: String) {
        self.name = name
        self.originType = originType
        self.originProperty = originProperty
    }
}

extension QueryStringOptions {
    /// `c`, `d` or `cd`, as written between brackets.
    var letters: String {
        (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "")
    }
}
