import Foundation

#if !canImport(UIKit) && !canImport(AppKit)
// UIKit and AppKit give IndexPath a section and an item (row); sectioned results changes use them,
// so apps written for those platforms compile elsewhere too.
extension IndexPath {
    public init(item: Int, section: Int) { self.init(indexes: [section, item]) }
    public init(row: Int, section: Int) { self.init(indexes: [section, row]) }
    public var section: Int { self[0] }
    public var item: Int { self[1] }
    public var row: Int { self[1] }
}
#endif

// Atoll's own code uses these, never the names above: on Apple platforms those come from UIKit or
// AppKit, which Atoll does not import (a library that imports UIKit makes every app link it, and
// which one exists depends on the platform), so Atoll compiles wherever Foundation does.
// AppleDeploymentTargetLintTests fails if `IndexPath(item:section:)`, `.section` or `.item` of an
// index path comes back into Atoll's sources.
extension IndexPath {
    /// The index path of `item` in `section`, as `IndexPath(item:section:)` makes it.
    init(_ item: Int, inSection section: Int) { self.init(indexes: [section, item]) }
    /// `section`, from Foundation alone.
    var sectionIndex: Int { self[0] }
    /// `item` (`row`), from Foundation alone.
    var itemIndex: Int { self[1] }
}
