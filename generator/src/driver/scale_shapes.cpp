#include "driver/scale_shapes.h"

#include <algorithm>
#include <set>

#include "frontend/composite_kernel.h"

namespace akg {

namespace {

using nlohmann::json;

int64_t total_elements(const CompositeKernel &k) {
    int64_t n = 0;
    for (const auto &t : k.inputs) n += element_count(t.shape);
    for (const auto &t : k.outputs) n += element_count(t.shape);
    return n;
}

// Extents of the largest tensor, largest first: scaling one of them shrinks the kernel most.
std::vector<int64_t> candidate_extents(const CompositeKernel &k) {
    const Shape *largest = nullptr;
    int64_t most = -1;
    auto consider = [&](const Shape &s) {
        int64_t n = element_count(s);
        if (n > most) most = n, largest = &s;
    };
    for (const auto &t : k.inputs) consider(t.shape);
    for (const auto &t : k.outputs) consider(t.shape);
    std::set<int64_t, std::greater<>> extents;
    if (largest)
        for (int64_t d : *largest)
            if (d > 2) extents.insert(d);
    return {extents.begin(), extents.end()};
}

bool is_extent_list(const json &j) {
    return j.is_array() && std::all_of(j.begin(), j.end(), [](const json &d) { return d.is_number_integer(); });
}

// Replaces `from` by `to` in every "shape" array of the document: tensor descs and the shape
// attributes of Reshape/BroadcastTo ({"name": "shape", "value": [...]}).
void replace_extent(json &j, int64_t from, int64_t to) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            bool shape_attr = it.key() == "value" && j.contains("name") && j["name"] == "shape";
            if ((it.key() == "shape" || shape_attr) && is_extent_list(it.value())) {
                for (auto &d : it.value())
                    if (d.get<int64_t>() == from) d = to;
            } else {
                replace_extent(it.value(), from, to);
            }
        }
    } else if (j.is_array()) {
        for (auto &e : j) replace_extent(e, from, to);
    }
}

} // namespace

std::optional<ScaledKernel> scale_kernel_shapes(const std::string &text, const std::string &source, int64_t target_elements) {
    json doc = json::parse(text);
    CompositeKernel kernel = parse_composite(text, source);
    std::string description;
    for (int round = 0; round < 4 && total_elements(kernel) > target_elements; ++round) {
        int64_t n = total_elements(kernel);
        bool progressed = false;
        for (int64_t extent : candidate_extents(kernel)) {
            // The element count is at least linear in the extent, so this factor reaches the target
            // when the extent occurs once per tensor; later rounds handle the rest.
            int64_t scaled = std::max<int64_t>(2, static_cast<int64_t>(static_cast<double>(extent) * target_elements / n));
            if (scaled >= extent) continue;
            json candidate = doc;
            replace_extent(candidate, extent, scaled);
            try {
                std::string candidate_text = candidate.dump();
                CompositeKernel k = parse_composite(candidate_text, source);
                validate_composite(k);
                if (total_elements(k) >= n) continue;
                doc = std::move(candidate);
                kernel = std::move(k);
                description += (description.empty() ? "" : ", ") + std::string("dim ") + std::to_string(extent) + " -> " +
                               std::to_string(scaled);
                progressed = true;
                break;
            } catch (const std::exception &) {
                continue; // the extent is tied to another one (e.g. by a reshape): try the next
            }
        }
        if (!progressed) break;
    }
    if (description.empty()) return std::nullopt;
    return ScaledKernel{doc.dump(), description};
}

} // namespace akg
