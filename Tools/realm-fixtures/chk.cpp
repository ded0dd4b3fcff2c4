#include <realm/db.hpp>
#include <realm/group.hpp>
#include <realm/table.hpp>
#include <iostream>
using namespace realm;
int main(int argc, char** argv) {
    std::string key;
    if (argc > 2) { key.resize(64); for (int i = 0; i < 64; ++i) key[i] = char(i); }
    Group g(argv[1], argc > 2 ? key.data() : nullptr);
    for (auto tk : g.get_table_keys()) {
        auto t = g.get_table(tk);
        std::cout << t->get_name() << " type=" << int(t->get_table_type()) << " rows=" << t->size() << " cols:";
        for (auto c : t->get_column_keys()) {
            std::cout << " " << t->get_column_name(c) << "(" << int(c.get_type()) << (c.is_list()?",list":"") << (c.is_set()?",set":"") << (c.is_dictionary()?",dict":"") << (c.is_nullable()?",null":"") << (t->has_search_index(c)?",idx":"") << ")";
        }
        if (t->get_name() == "metadata") std::cout << " version=" << t->begin()->get<int64_t>(t->get_column_keys()[0]);
        std::cout << "\n";
    }
}
