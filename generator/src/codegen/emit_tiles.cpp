// Tiles: tile-transposes' tiles as akg_transpose calls or staged transposes.
#include "codegen/emitter.h"

namespace akg::codegen {

bool Emitter::tile_loop(isl_ast_node *loop, TileLoop &out) {
    if (isl_ast_node_get_type(loop) != isl_ast_node_for) return false;
    out.iterator = ast_expr(isl_ast_node_for_get_iterator(loop));
    out.first = ast_expr(isl_ast_node_for_get_init(loop));
    if (isl_ast_node_for_is_degenerate(loop) == isl_bool_true) {
        out.trip = "1";
        return true;
    }
    int64_t step = 0;
    if (!int_value(isl_ast_node_for_get_inc(loop), step) || step != 1) return false;
    isl_ast_expr *cond = isl_ast_node_for_get_cond(loop);
    bool ok = isl_ast_expr_get_type(cond) == isl_ast_expr_op &&
              (isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_le || isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_lt);
    if (ok) {
        bool inclusive = isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_le;
        ok = ast_expr(isl_ast_expr_op_get_arg(cond, 0)) == out.iterator;
        out.trip = "(" + ast_expr(isl_ast_expr_op_get_arg(cond, 1)) + " - " + out.first + (inclusive ? " + 1)" : ")");
    }
    isl_ast_expr_free(cond);
    return ok;
}

// tile-transposes' tile (tile_transposes.h): a loop over the tile's rows around one over its
// columns, around the copies. Each copy becomes one call of akg_transpose from the tile's
// first element; the columns' bounds must not depend on the row. "" when the loops are not
// in that form (they are then emitted as loops, which copy the same elements).
std::string Emitter::emit_transpose_tile(isl_ast_node *rows_loop, int depth) {
    TileLoop rows, columns;
    if (!tile_loop(rows_loop, rows)) return "";
    isl_ast_node *columns_loop = isl_ast_node_for_get_body(rows_loop);
    bool ok = tile_loop(columns_loop, columns) && !mentions(columns.first, rows.iterator) && !mentions(columns.trip, rows.iterator);
    isl_ast_node *body = ok ? isl_ast_node_for_get_body(columns_loop) : nullptr;
    isl_ast_node_free(columns_loop);
    std::vector<isl_ast_node *> users;
    if (body && isl_ast_node_get_type(body) == isl_ast_node_user) {
        users.push_back(isl_ast_node_copy(body));
    } else if (body && isl_ast_node_get_type(body) == isl_ast_node_block) {
        isl_ast_node_list *list = isl_ast_node_block_get_children(body);
        for (int k = 0; k < isl_ast_node_list_n_ast_node(list); ++k) users.push_back(isl_ast_node_list_get_ast_node(list, k));
        isl_ast_node_list_free(list);
    }
    isl_ast_node_free(body);
    std::string calls;
    for (isl_ast_node *u : users) {
        if (ok && isl_ast_node_get_type(u) == isl_ast_node_user) {
            UserCall c = user_call(u);
            auto tile = m_.transpose_tiles.find(c.statement->name);
            ok = tile != m_.transpose_tiles.end() && !tile->second.staged;
            if (ok) {
                // A streamed output (stream_outputs.cpp: each tile one contiguous run) goes
                // through a local array and non-temporal stores.
                bool streamed = m_.buffer(c.statement->stage->buffer).streamed;
                streams_in_function_ |= streamed;
                std::string in = pad(depth + 2), strides = std::to_string(tile->second.source_row_stride) + ", &" + out_access(*c.statement) +
                                                              (streamed ? "" : ", " + std::to_string(tile->second.output_column_stride));
                calls += pad(depth + 1) + "{\n" + bind_vars(c, in, true, false) + in + (streamed ? "akg_transpose_streamed(&" : "akg_transpose(&") +
                         printer_.buffer_access(tile->second.source, tile->second.source_args) + ", " + strides + ", " + rows.trip + ", " + columns.trip +
                         ");\n" + pad(depth + 1) + "}\n";
            }
        } else {
            ok = false;
        }
        isl_ast_node_free(u);
    }
    if (!ok || calls.empty()) return "";
    return pad(depth) + "{\n" + pad(depth + 1) + "const int64_t " + rows.iterator + " = " + rows.first + ";\n" + pad(depth + 1) +
           "const int64_t " + columns.iterator + " = " + columns.first + ";\n" + calls + pad(depth) + "}\n";
}

// tile-transposes' tile of a computing statement (tile_transposes.h): a loop over the
// tile's columns around a mark::Simd and the vector loop over its rows, around the
// statement. The source's tile is transposed into a local array first (akg_transpose, from
// the tile's first element), and the statement reads the source from it. "" when the loops
// are not in that form (they are then emitted reading the source itself).
std::string Emitter::emit_staged_transpose_tile(isl_ast_node *columns_loop, int depth) {
    TileLoop columns, rows;
    if (!tile_loop(columns_loop, columns)) return "";
    isl_ast_node *mark = isl_ast_node_for_get_body(columns_loop);
    isl_ast_node *rows_loop = isl_ast_node_get_type(mark) == isl_ast_node_mark ? isl_ast_node_mark_get_node(mark) : nullptr;
    isl_ast_node_free(mark);
    bool ok = rows_loop && tile_loop(rows_loop, rows) && !mentions(rows.first, columns.iterator) && !mentions(rows.trip, columns.iterator);
    isl_ast_node *body = ok ? isl_ast_node_for_get_body(rows_loop) : nullptr;
    isl_ast_node_free(rows_loop);
    ok = body && isl_ast_node_get_type(body) == isl_ast_node_user;
    std::string s;
    if (ok) {
        UserCall c = user_call(body);
        auto tile = m_.transpose_tiles.find(c.statement->name);
        ok = tile != m_.transpose_tiles.end() && tile->second.staged;
        if (ok) {
            const TransposeTile &t = tile->second;
            const BufferInfo &source = m_.buffer(t.source);
            std::string array = "tile_" + t.source, in = pad(depth + 2);
            s = pad(depth) + "{\n" + pad(depth + 1) + "alignas(64) " + storage_type(source) + " " + array + "[" +
                std::to_string(t.tile_rows * t.tile_columns) + "];\n" + pad(depth + 1) + "int64_t " + array + "_row0, " + array + "_column0;\n" +
                pad(depth + 1) + "{\n" + in + "const int64_t " + columns.iterator + " = " + columns.first + ";\n" + in + "const int64_t " +
                rows.iterator + " = " + rows.first + ";\n" + bind_vars(c, in, true, false) + in + array + "_row0 = " +
                printer_.print(t.source_args[t.row_arg]) + ";\n" + in + array + "_column0 = " + printer_.print(t.source_args[t.column_arg]) +
                ";\n" + in + "akg_transpose(&" + printer_.buffer_access(t.source, t.source_args) + ", " + std::to_string(t.source_row_stride) +
                ", " + array + ", " + std::to_string(t.tile_rows) + ", " + rows.trip + ", " + columns.trip + ");\n" + pad(depth + 1) + "}\n";
            printer_.read_transposed(t.source, {array, array + "_row0", array + "_column0", t.row_arg, t.column_arg, t.tile_rows});
            s += emit_node(columns_loop, depth + 1);
            printer_.stop_reading_transposed();
            s += pad(depth) + "}\n";
        }
    }
    isl_ast_node_free(body);
    return ok ? s : "";
}

} // namespace akg::codegen
