// The emitter of a kernel's C++ from isl's AST (private to codegen/). One class, its members
// defined by responsibility: emit_cpp.cpp (the kernel frame: function header, buffer
// bindings, scratch), emit_loops.cpp, emit_statements.cpp, emit_parallel.cpp,
// emit_reductions.cpp, emit_data_movement.cpp (streams, staging, blocks), emit_tiles.cpp
// (transposes); expressions are expr_printer.cpp's.
#pragma once
#include "codegen/emit_cpp.h"
#include "codegen/expr_printer.h"

#include "codegen/float16_bits.h"
#include "codegen/loop_invariants.h"
#include "passes/math_identities.h"
#include "poly/group_short_rows.h"
#include "poly/schedule_annotation.h"
#include "poly/stream_outputs.h"

#include <algorithm>
#include <functional>
#include <map>

#include <cmath>
#include <cstdio>
#include <regex>
#include <set>
#include <sstream>

#include <isl/id.h>
#include <isl/val.h>

namespace akg::codegen {

// isl AST helpers (emit_loops.cpp).
std::string ast_expr(isl_ast_expr *e);
Halide::Expr ast_to_halide(isl_ast_expr *e);
const PolyStatement &statement_of(const PolyModel &m, isl_ast_expr *call);
std::set<std::string> buffers_read(const PolyStatement &st);
std::vector<std::pair<const PolyStatement *, std::set<std::string>>> statements_in_order(const PolyModel &m, isl_ast_node *node);

struct UserCall {
    const PolyStatement *statement = nullptr;
    std::vector<std::string> args;
    std::vector<Halide::Expr> index; // the same as Halide expressions (undefined where unknown)
};

class Emitter {
public:
    Emitter(const PolyModel &m, const EmitOptions &o) : m_(m), o_(o), printer_(&m) {}

    std::string emit(isl_ast_node *ast);

    // `code` one level (4 spaces) deeper.
    static std::string indented(const std::string &code);

private:
    const PolyModel &m_;
    const EmitOptions &o_;
    ExprPrinter printer_;
    std::vector<std::string> helpers_;
    std::vector<std::string> iterators_; // enclosing loop iterators
    // What is known of the enclosing loops' iterators (for the index simplification).
    Scope<Interval> loop_bounds_;
    Scope<ModulusRemainder> loop_alignment_;

    static bool int_value(isl_ast_expr *e, int64_t &v);
    void enter_loop(isl_ast_node *for_node, const std::string &it);
    void leave_loop(const std::string &it);
    std::map<std::string, Halide::Expr> strided_, strided_back_;
    bool in_simd_ = false;

    static std::string pad(int depth) { return std::string(4 * depth, ' '); }

    bool written(const BufferInfo &b) const;

    std::string storage_type(const BufferInfo &b) const { return dtype_c_type(b.dtype); }
    std::string local_buffer_declaration(const BufferInfo &b, const std::string &indent) const;

    std::string buffer_bindings(const std::string &indent, bool kernel_entry);

    std::string scratch_frees(const std::string &indent) const;

    std::string parameter_list() const;
    std::string argument_list() const;

    UserCall user_call(isl_ast_node *node);

    static std::string init_value(const Stage &s);

    static bool ordered_extremum(const Stage &s) { return s.ignores_nan || is_nan_free_flag(s.value); }

    static std::string combine(const Stage &s, const std::string &acc, const std::string &v);

    static const char *omp_reduction(const Stage &s);

    Halide::Expr stored_value(const Stage &s) const;

    // The maximum (minimum) of values rounded to float16 is the rounding of their maximum
    // (minimum): rounding is monotonic, and NaN stays NaN. A max/min reduction of rounded values
    // then accumulates the unrounded ones and rounds once per loop instead of once per element
    // (log-softmax over a float16 cast: the rounding cost more than the comparison).
    std::set<const Stage *> rounding_deferred_;

    std::string value_with_lets(const Stage &s, const std::string &indent, std::string &lets) { return value_with_lets(stored_value(s), indent, lets); }
    std::string value_with_lets(const Halide::Expr &value, const std::string &indent, std::string &lets);

    Halide::Expr float16_store_bits(const PolyStatement &st) const;

    std::string store_cast(const BufferInfo &b, const std::string &v) const;

    std::string bind_vars(const UserCall &c, const std::string &indent, bool out_dims, bool red_dims);

    // Streamed outputs (stream_outputs.h). In a vector loop with constant bounds, an
    // unconditional, unit-stride store of such an output goes to a float block array; after the
    // loop the block is streamed out with non-temporal stores. Fine-grained on purpose: streaming
    // each 64-element block right after computing it keeps the loads and the streaming stores
    // interleaved (one burst of stores per parallel task measured slower than ordinary stores).
    // Outputs converted per block (BufferInfo::converted_per_block) go the same way with
    // ordinary stores: every statement storing to such an output gets a block of its own (a
    // transposing cast writes nine planes of one output per iteration), copied out in the
    // statements' order.
    struct StreamedBlock {
        std::string buffer, array, base; // the output; the block array; the element offset of its first element
        bool bits = false;               // a uint16 array of float16 bits (float16_bits_of_constants), not floats
    };
    struct StreamedLoop {
        std::string iterator;
        int64_t lo = 0, trip = 0;
        int conditional_depth = 0;
        std::vector<StreamedBlock> blocks;
        bool has_block_of(const std::string &buffer) const {
            return std::any_of(blocks.begin(), blocks.end(), [&](const StreamedBlock &block) { return block.buffer == buffer; });
        }
    };
    StreamedLoop *streamed_loop_ = nullptr;
    int conditional_depth_ = 0;        // if-nodes around the node being emitted
    bool streams_in_function_ = false; // the function being emitted streams: it fences at its end
    const std::map<std::string, Halide::Expr> *statement_index_ = nullptr; // i0.. of the statement

    bool kernel_writes_blocks() const;

    std::string streamed_block_access(const PolyStatement &st);

    static Halide::Expr store_offset(const BufferInfo &b, const std::map<std::string, Halide::Expr> &index);
    static std::map<std::string, Halide::Expr> index_map(const UserCall &c);

    // Interleaved float16 stores (NCHW float32 -> NHWC float16 with 3 channels: the vector loop
    // runs over pixels and its G statements each store every G-th element). One statement alone
    // could not use the hardware conversion (vcvtps2ph), which needs adjacent elements; together
    // they write one contiguous run of trip * G elements per loop. They store to a float block
    // array instead, converted at once after the loop (akg_f32_to_f16_n).
    struct GroupedBlock {
        std::string array;
        Halide::Expr base; // the element offset of the run's first element
        int64_t group = 0; // G
    };
    struct GroupedLoop {
        std::string iterator;
        int64_t lo = 0, trip = 0;
        std::map<std::string, GroupedBlock> blocks; // by buffer
    };
    GroupedLoop *grouped_loop_ = nullptr;
    static constexpr int64_t kMaxGroup = 8;

    std::vector<UserCall> body_statements(isl_ast_node *body);

    void find_grouped_blocks(isl_ast_node *body, GroupedLoop &loop);

    std::string grouped_block_access(const PolyStatement &st);

    std::string with_grouped_blocks(const GroupedLoop &loop, int depth, const std::string &loop_code);

    std::string with_streamed_blocks(const StreamedLoop &loop, int depth, const std::string &loop_code);

    std::string out_access(const PolyStatement &st);

    std::string emit_user(isl_ast_node *node, int depth, const std::string *accumulator, bool hoist = true);

    // Loop-invariant subexpressions (loop_invariants.h). Each loop of the function being
    // emitted has a frame; a hoisted value is declared before the outermost loop it does not
    // depend on, that writes none of the buffers it reads, within its function (a parallel
    // body starts with a barrier). Reads must be provably in bounds: a loop may run zero times,
    // or its statement only under a condition, and the hoisted value is computed regardless.
    struct HoistFrame {
        std::string iterator; // "" for a barrier
        std::set<std::string> written;
        std::vector<std::string> declarations;
        std::map<std::string, std::string> names; // declared value -> variable
    };
    std::vector<HoistFrame> hoist_frames_;
    int hoisted_count_ = 0;

    std::set<std::string> written_buffers(isl_ast_node *node);
    void enter_hoist_frame(const std::string &iterator, isl_ast_node *body);
    std::string leave_hoist_frame(int depth, const std::string &loop_code);

    bool provably_in_bounds(const InvariantUse::Read &read) const;

    std::string hoist_invariant(const Halide::Expr &e);

    std::string emit_statement(const UserCall &c, int depth, const std::string *accumulator);

    std::vector<isl_ast_node *> reduction_nest(isl_ast_node *for_node, std::vector<isl_ast_node *> &loops, std::vector<isl_ast_node *> &sides);

    static std::vector<isl_ast_node *> statements_of(isl_ast_node *node);

    static isl_ast_node *without_single_blocks(isl_ast_node *node);

    static isl_ast_node *unwrapped(isl_ast_node *node);

    isl_ast_node *simd_loop_body(isl_ast_node *loop);

    static bool constant_bound(isl_ast_expr *e, int64_t &v);

    // Column sums (dgamma/dbeta, bias gradients: sink-columns walks a block of columns down
    // the rows) accumulate every row's float value into a double accumulator per column, two
    // conversions and a double addition per element. Here the rows run in blocks of
    // PolyModel::column_sum_block_rows (plan-reductions): each block sums into float partials
    // per column, and the partials are added to the double accumulators once per block.
    // Applies to a loop over the reduction index whose body holds one or more vector loops over
    // columns holding such sums (float values, double accumulators indexed by the column
    // alone), the rest of the body (also the other statements of those loops) neither reading
    // nor writing their accumulators.
    struct ColumnSumLoop {
        isl_ast_node *columns = nullptr; // the vector loop over columns (owned)
        std::vector<isl_ast_node *> sums; // its statements (owned)
        std::vector<std::string> partials; // one per sum
        std::string col_it;
        int64_t col_lo = 0, col_hi = 0;
    };
    struct ColumnBlocking {
        std::string row_it;
        int64_t lo = 0, hi = 0;
        // A tile of at most column_sum_block_rows rows (sink-columns' mark::ColumnRowTile: the
        // loop's own bounds): one block, no loop over blocks.
        bool single = false;
        std::vector<ColumnSumLoop> loops;
        void release() {
            for (auto &l : loops) {
                for (auto *u : l.sums) isl_ast_node_free(u);
                isl_ast_node_free(l.columns);
            }
            loops.clear();
        }
    };
    bool row_tile_pending_ = false; // the next row loop is a mark::ColumnRowTile (ColumnBlocking::single)
    // Statement name -> its partial's element, while the rows of a ColumnBlocking are emitted.
    std::map<std::string, std::string> column_partials_;
    std::string column_rows_it_; // the iterator of those rows

    ColumnBlocking column_blocking(isl_ast_node *row_loop);

    bool column_sum_loop(isl_ast_node *node, const std::string &row_it, ColumnSumLoop &l);

    std::string blocked_rows_code(ColumnBlocking &b, const std::string &rows_code, int depth);

    std::string emit_grouped_row_sums(isl_ast_node *row_loop, int depth);

    std::string grouped_row_sums_code(isl_ast_node *row_loop, isl_ast_node *terms, isl_ast_node *update, int64_t lo, int64_t term_lo, int64_t n,
                                      const std::string &rows, int depth);

    bool bounds_use_iterators(isl_ast_node *node, const std::vector<isl_ast_node *> &outer);

    std::string for_header(isl_ast_node *node, std::string &iterator);

    bool constant_unit_loop(isl_ast_node *node, const std::string &it, StreamedLoop &loop);
    static constexpr int64_t kMaxStreamedBlock = 1024; // elements of a block array (on the stack)
    struct ConditionalScope {
        int &depth;
        explicit ConditionalScope(int &d) : depth(d) { ++depth; }
        ~ConditionalScope() { --depth; }
    };

    static bool contains(isl_ast_node *node, isl_ast_node_type type);

    // One reduction of a reduction nest: its update statement, its accumulator type, the
    // prefix of its accumulators' names (acc, acc1, ... for the first; accB, accB1, ... next),
    // and how plan-reductions has it accumulate.
    struct Accumulation {
        isl_ast_node *update;
        const Stage *stage;
        std::string type;
        std::string prefix;
        const ReductionPlan *plan;
    };

    std::string emit_sides(const std::vector<isl_ast_node *> &sides, bool feeding, int depth);

    std::string emit_accumulation(const std::vector<isl_ast_node *> &updates, const std::vector<isl_ast_node *> &sides, std::vector<isl_ast_node *> &loops,
                                  int depth);

    std::string emit_lane_reduction(isl_ast_node *loop, const std::vector<Accumulation> &accs, const std::vector<isl_ast_node *> &sides,
                                    const std::vector<std::string> &results, int d);

    std::string next_row_prefetches(const std::vector<Accumulation> &accs, const std::string &it, const std::string &begin_v,
                                    const std::string &full, const std::string &block, const std::string &L, const std::string &p1,
                                    const std::string &p2, std::string &out);

    std::set<const PolyStatement *> update_statements(const std::vector<Accumulation> &accs);
    // The first of `updates` in the parallel body's statement order; the statements before it
    // run before the reduction.
    // The parallel body's statements in execution order, with the buffers each reads.
    using BodyOrder = std::vector<std::pair<const PolyStatement *, std::set<std::string>>>;
    BodyOrder::const_iterator first_update_in_body(const std::set<const PolyStatement *> &updates) const;

    std::string stream_prefetches(const std::vector<Accumulation> &accs, int lanes_per_block, const std::string &indent);

    std::string column_row_prefetches(int columns, const std::string &indent);

    std::string lane_loops(const std::vector<Accumulation> &accs, const std::vector<isl_ast_node *> &sides, const std::vector<std::string> &lane_types,
                           int lanes_per_block, const std::string &it, const std::string &begin_v, const std::string &end_v,
                           const std::vector<std::string> &results, int d);
    std::string lane_mask_; // set while emitting the masked last block of a lane reduction

    // Side statements with a float16 output store a block's values to a float array, converted
    // after the block loop (akg_f32_to_f16_n: vcvtps2ph) instead of per element with the integer
    // code of vector loops; streamed outputs (stream_outputs.h) are streamed from the array,
    // within parallel bodies, which fence their non-temporal stores (BatchNorm's ReLU gradient
    // output: 1.35x faster than ordinary stores). The masked last block stores all its lanes:
    // the ones already stored by the previous block get the same values again. Declares the
    // arrays into `out` and returns the conversions to emit after the lane loop.
    std::map<std::string, std::string> side_blocks_; // buffer -> its block array element
    bool in_parallel_body_ = false;
    // The parallel body's row prefetches (prefetch_next_rows.h), its statements in execution
    // order, and the buffers already prefetched.
    const std::vector<RowPrefetch> *row_prefetches_ = nullptr;
    BodyOrder body_order_; // with the buffers each reads
    std::set<std::string> prefetched_in_body_;
    std::string begin_side_blocks(const std::vector<isl_ast_node *> &sides, const std::string &it, const std::string &first,
                                  const std::string &lane, int lanes_per_block, std::string &out, const std::string &indent);
    bool lane_reductions_in_function_ = false;
    int loop_depth_ = 0;    // loops around the statement being emitted, within its function

    static std::string staging_array(const Float16Staging &st, bool read_by_lane_reductions);

    std::string emit_parallel(isl_ast_node *for_node, int depth, int members, const std::vector<Float16Staging> *stagings,
                              const std::vector<RowPrefetch> *prefetches);

    bool runs_serially(isl_ast_node *node) const;

    std::string emit_function_body(isl_ast_node *node, bool &streams, bool &reduces);

    std::string parallel_for_code(const std::vector<std::string> &headers, const std::string &call, bool streams, bool serial, int depth) const;

    std::string parallel_region_code(const std::vector<std::string> &headers, const std::string &call, bool streams, int depth) const;

    std::string emit_row_chunks(isl_ast_node *row_loop, int chunks_wanted, int depth);
    int64_t chunk_rows_ = 0; // while emit_row_chunks emits a chunk's rows

    std::string reserve_row_chunk_helper(int &id);
    std::string local_declarations(const std::set<std::string> &local) const;

    static std::vector<isl_ast_node *> user_nodes(isl_ast_node *node);

    std::string emit_wide_row_chunks(isl_ast_node *row_loop, int depth);
    // While emit_wide_row_chunks emits a chunk: its sums' slices are indexed by their
    // accumulator's element (i0, ...), which emit_statement binds.
    bool accumulators_by_element_ = false;
    // While emit_wide_row_chunks emits a chunk: the row loop's iterator and its header there.
    std::pair<std::string, std::string> chunk_row_header_;

    // The loop of a tile: its iterator, first value and trip count, as C expressions.
    struct TileLoop {
        std::string iterator, first, trip;
    };
    static bool tile_loop(isl_ast_node *loop, TileLoop &out);

    std::string emit_transpose_tile(isl_ast_node *rows_loop, int depth);

    std::string emit_staged_transpose_tile(isl_ast_node *columns_loop, int depth);

    std::string emit_node(isl_ast_node *node, int depth);
};

} // namespace akg::codegen
