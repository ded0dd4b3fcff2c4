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
