"""The pair loops of LambdaMART's lambda kernel
(:func:`~sklearn_ltr._objectives.lambdarank._lambdarank_one_query`): the
lambdas and hessians of every pair ``(i, j > i)`` of one rank ``i``, all
of them on SIMD lanes (:func:`_pairs_of_rank`) or, for a rank of its
query's lowest gain, only those with a higher gain
(:func:`_pairs_of_lowest_gain_rank`), to the same bits.
"""

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# The sums over a rank's pairs are written out in a fixed order
# (_sums_over_pairs) rather than left for LLVM to reorder under fastmath: with
# "reassoc" or "contract" the rounding depends on how LLVM compiles a kernel
# in context, and a fit whose kernels were compiled in the process could then
# grow other trees than one that loaded them from numba's cache.


@intrinsic
def _sums_over_pairs(typingctx, signed, hess, n):
    """``sum(signed[:n])``, ``sum(|signed[:n]|)`` and ``sum(hess[:n])``, each
    added in four interleaved partial sums (element ``k`` to sum ``k % 4``,
    in order of ``k``) combined pairwise, ``(s0 + s1) + (s2 + s3)``, then the
    tail ``k >= 4 * (n // 4)`` added one by one: a fixed order.

    Written in LLVM IR so that the four partial sums are the lanes of one
    4-wide vector add: numba leaves LLVM's SLP vectoriser off, and without
    fast-math flags LLVM may not reorder a sum to vectorise it itself, so
    the same sums written as twelve scalars ran one element at a time (a
    sixth of the kernel's time on make_ranking data). Each lane adds in
    IEEE order, so the result is that of the scalar code, bit for bit.
    ``signed`` and ``hess`` are contiguous float64 arrays of at least ``n``
    elements (not checked).
    """
    if not (isinstance(signed, types.Array) and isinstance(hess, types.Array)
            and signed.dtype == types.float64 and hess.dtype == types.float64
            and signed.layout == "C" and hess.layout == "C" and signed.ndim == 1
            and hess.ndim == 1 and isinstance(n, types.Integer)):
        return None
    sig = types.UniTuple(types.float64, 3)(signed, hess, n)

    def codegen(context, builder, signature, args):
        signed_data = context.make_array(signature.args[0])(context, builder, args[0]).data
        hess_data = context.make_array(signature.args[1])(context, builder, args[1]).data
        i64 = ir.IntType(64)
        f64 = ir.DoubleType()
        vec = ir.VectorType(f64, 4)
        count = context.cast(builder, args[2], signature.args[2], types.int64)
        n_blocks = builder.sdiv(count, ir.Constant(i64, 4))
        vec_abs = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vec, [vec]), "llvm.fabs.v4f64")
        scalar_abs = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(f64, [f64]), "llvm.fabs.f64")
        sums = [cgutils.alloca_once_value(builder, ir.Constant(vec, [0.0] * 4))
                for _ in range(3)]
        with cgutils.for_range(builder, n_blocks, intp=i64) as loop:
            first = builder.mul(loop.index, ir.Constant(i64, 4))
            # align=8: numba only guarantees element alignment for its arrays.
            x = builder.load(builder.bitcast(builder.gep(signed_data, [first]),
                                             vec.as_pointer()), align=8)
            y = builder.load(builder.bitcast(builder.gep(hess_data, [first]),
                                             vec.as_pointer()), align=8)
            for acc, term in zip(sums, (x, builder.call(vec_abs, [x]), y)):
                builder.store(builder.fadd(builder.load(acc), term), acc)
        totals = []
        for acc in sums:
            lanes = builder.load(acc)
            part = [builder.extract_element(lanes, ir.Constant(ir.IntType(32), j))
                    for j in range(4)]
            total = builder.fadd(builder.fadd(part[0], part[1]), builder.fadd(part[2], part[3]))
            totals.append(cgutils.alloca_once_value(builder, total))
        tail_start = builder.mul(n_blocks, ir.Constant(i64, 4))
        with cgutils.for_range(builder, builder.sub(count, tail_start), intp=i64) as loop:
            k = builder.add(tail_start, loop.index)
            x = builder.load(builder.gep(signed_data, [k]))
            y = builder.load(builder.gep(hess_data, [k]))
            for acc, term in zip(totals, (x, builder.call(scalar_abs, [x]), y)):
                builder.store(builder.fadd(builder.load(acc), term), acc)
        return context.make_tuple(builder, signature.return_type,
                                  [builder.load(acc) for acc in totals])

    return sig, codegen


@njit(cache=True, inline="always", error_model="numpy")
def _pair_lambda_hessian(dg, gap, d_i, d_j, t, inverse_max_dcg, sigma, gap_eps, gap_scale):
    """``|lambda|`` and hessian of the pair of ranks ``i < j``, from their
    gain difference ``dg``, score gap ``gap = s_i - s_j >= 0`` (ranks are
    sorted by score), discounts and ``t = exp(sigma * (s_high - s_low))``.
    Both pair loops evaluate a pair by this one function, inlined, so that
    they give it the same bits."""
    # |delta NDCG| of swapping ranks i and j; discounts decrease with rank.
    w = abs(dg) * (d_i - d_j) * inverse_max_dcg
    # p = 1 / (1 + t); one division serves both p and the normalisation by
    # the gap.
    gap_div = gap_eps + gap_scale * gap
    r = 1.0 / (gap_div * (1.0 + t))
    p = gap_div * r
    pl = sigma * w * r
    return pl, sigma * pl * (1.0 - p)


@njit(cache=True, error_model="numpy")
def _pairs_of_rank(
    i, s, g, e, e_inv, e_i, e_inv_i, discounts, inverse_max_dcg, sigma,
    gap_eps, gap_scale, lam, hess, pair_signed, pair_hess,
):
    """Add the contributions of the pairs (i, j > i) to ``lam`` and ``hess``.

    Arrays are in rank order. ``e[j] * e_inv_i`` must equal
    ``exp(sigma * (s[j] - s[i]))`` and ``e_i * e_inv[j]`` its inverse, which
    turns the per-pair exponential into a product; the loop then has no
    calls, no branches and no sum across pairs, and LLVM vectorises it. Each
    pair's lambda and hessian for row ``i`` go to ``pair_signed`` and
    ``pair_hess`` (scratch of length ``>= n - i - 1``) and are summed after
    it by :func:`_sums_over_pairs`. A pair with equal labels has equal
    gains, hence weight 0, and adds exactly 0. The pair weight is divided by
    ``gap_eps + gap_scale * gap`` (``1 + 0 * gap`` when not normalising).
    Returns the sum of the pairs' ``|lambda|``.
    """
    n = s.shape[0]
    s_i = s[i]
    g_i = g[i]
    d_i = discounts[i]
    # Slices index from 0, which tells numba the index is non-negative: with
    # range(i + 1, n) its negative-index wraparound blocks vectorisation.
    s_ = s[i + 1 : n]
    g_ = g[i + 1 : n]
    e_ = e[i + 1 : n]
    e_inv_ = e_inv[i + 1 : n]
    d_ = discounts[i + 1 : n]
    lam_ = lam[i + 1 : n]
    hess_ = hess[i + 1 : n]
    for k in range(n - i - 1):
        dg = g_i - g_[k]
        i_is_high = dg > 0.0
        t = e_i * e_inv_[k] if i_is_high else e_[k] * e_inv_i
        pl, ph = _pair_lambda_hessian(dg, s_i - s_[k], d_i, d_[k], t, inverse_max_dcg, sigma,
                                      gap_eps, gap_scale)
        # Gradient of the loss: negative for the more relevant document.
        signed = -pl if i_is_high else pl
        lam_[k] -= signed
        hess_[k] += ph
        pair_signed[k] = signed
        pair_hess[k] = ph
    lam_sum, abs_sum, hess_sum = _sums_over_pairs(pair_signed, pair_hess, n - i - 1)
    lam[i] += lam_sum
    hess[i] += hess_sum
    return abs_sum


@njit(cache=True, error_model="numpy")
def _pairs_of_lowest_gain_rank(
    i, s, g, e, e_inv_i, discounts, inverse_max_dcg, sigma, gap_eps, gap_scale,
    higher, lam, hess,
):
    """:func:`_pairs_of_rank` for a rank ``i`` whose gain is the lowest of
    its query, computing only the pairs with the ranks ``higher`` (those
    after ``i`` whose gain is higher, in rank order), one at a time.

    A pair with equal gains has weight 0 and adds zeros. Row ``i``'s sums
    are those of :func:`_sums_over_pairs` with the skipped pairs' zeros
    left out: each pair goes to the partial sum its position ``k`` gives it
    there (``k % 4``, or the tail after the four are combined), and the
    other partial sums get ``+0.0``. Adding a zero leaves a sum as it is
    (none of these sums is ever -0.0: starting from +0.0, a sum is -0.0 only
    if both terms are), so the bits are those of :func:`_pairs_of_rank`
    wherever the query's score gaps are finite. (Where a gap overflows, as
    between scores of +-1e308, :func:`_pairs_of_rank` gives a skipped
    pair's hessian ``0 * inf``, NaN; such scores are out of any fit's range.)
    """
    n = s.shape[0]
    s_i = s[i]
    g_i = g[i]
    d_i = discounts[i]
    # Pairs at positions k = j - i - 1 below `in_lanes` go to four partial
    # sums, the rest to the tail (see _sums_over_pairs).
    in_lanes = 4 * ((n - i - 1) // 4)
    l0 = l1 = l2 = l3 = 0.0
    a0 = a1 = a2 = a3 = 0.0
    h0 = h1 = h2 = h3 = 0.0
    m = 0
    while m < higher.shape[0] and higher[m] - i - 1 < in_lanes:
        j = higher[m]
        pl, ph = _pair_lambda_hessian(g_i - g[j], s_i - s[j], d_i, discounts[j], e[j] * e_inv_i,
                                      inverse_max_dcg, sigma, gap_eps, gap_scale)
        lam[j] -= pl
        hess[j] += ph
        lane = (j - i - 1) & 3
        l0 += pl if lane == 0 else 0.0
        l1 += pl if lane == 1 else 0.0
        l2 += pl if lane == 2 else 0.0
        l3 += pl if lane == 3 else 0.0
        a0 += abs(pl) if lane == 0 else 0.0
        a1 += abs(pl) if lane == 1 else 0.0
        a2 += abs(pl) if lane == 2 else 0.0
        a3 += abs(pl) if lane == 3 else 0.0
        h0 += ph if lane == 0 else 0.0
        h1 += ph if lane == 1 else 0.0
        h2 += ph if lane == 2 else 0.0
        h3 += ph if lane == 3 else 0.0
        m += 1
    lam_sum = (l0 + l1) + (l2 + l3)
    abs_sum = (a0 + a1) + (a2 + a3)
    hess_sum = (h0 + h1) + (h2 + h3)
    for j in higher[m:]:
        pl, ph = _pair_lambda_hessian(g_i - g[j], s_i - s[j], d_i, discounts[j], e[j] * e_inv_i,
                                      inverse_max_dcg, sigma, gap_eps, gap_scale)
        lam[j] -= pl
        hess[j] += ph
        lam_sum += pl
        abs_sum += abs(pl)
        hess_sum += ph
    lam[i] += lam_sum
    hess[i] += hess_sum
    return abs_sum
