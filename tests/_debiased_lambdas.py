"""The pair-by-pair oracle of LambdaMART's debiased lambdas, shared by the
tests of Unbiased LambdaMART (estimated biases) and of inverse propensity
weighting (given propensities, ``t+ = max(propensity, clip)``, ``t- = 1``)."""

import numpy as np

SCORE_GAP_EPS = float(np.float32(0.01))


def debiased_lambdas_by_pair(y, scores, position, offsets, t_plus, t_minus, *, sigma=1.0,
                             truncation=30, normalize=True, weights=None):
    """Gradients, hessians and costs by position, one pair at a time.

    Ranks by score (stable, descending); every pair of ranks (i, j > i) with
    i < truncation and different labels; h / l the more / less relevant
    document; w = |G_h - G_l| |D_i - D_j| / maxDCG@truncation, divided by
    0.01 + |s_i - s_j| when normalising (and the scores differ);
    lambda = sigma w / (1 + exp(sigma (s_h - s_l))), hessian = sigma lambda (1 - p);
    both divided by t+[pos_h] t-[pos_l] (eq. 23); the pair's cost
    c = w log(1 + exp(-sigma (s_h - s_l))) adds c / t-[pos_l] to C+[pos_h]
    and c / t+[pos_h] to C-[pos_l] (eqs. 30, 31).
    """
    n = y.shape[0]
    grad = np.zeros(n)
    hess = np.zeros(n)
    costs = np.zeros((2, t_plus.shape[0]))
    weights = np.ones(n) if weights is None else weights
    gains = 2.0 ** y - 1
    for q in range(offsets.shape[0] - 1):
        rows = np.arange(offsets[q], offsets[q + 1])
        order = rows[np.argsort(-scores[rows], kind="stable")]
        ideal = np.sort(gains[rows])[::-1][:truncation]
        max_dcg = np.sum(ideal / np.log2(np.arange(2, ideal.shape[0] + 2)))
        if rows.shape[0] < 2 or max_dcg == 0:
            continue
        s = scores[order]
        gap_normalise = normalize and s[0] != s[-1]
        lam = np.zeros(n)
        hes = np.zeros(n)
        total = 0.0
        for i in range(min(rows.shape[0] - 1, truncation)):
            for j in range(i + 1, rows.shape[0]):
                a, b = order[i], order[j]
                if gains[a] == gains[b]:
                    continue
                h, low = (a, b) if gains[a] > gains[b] else (b, a)
                w = abs(gains[a] - gains[b]) * (1 / np.log2(i + 2) - 1 / np.log2(j + 2)) / max_dcg
                if gap_normalise:
                    w /= SCORE_GAP_EPS + abs(scores[a] - scores[b])
                margin = sigma * (scores[h] - scores[low])
                p = 1 / (1 + np.exp(margin))
                bias = t_plus[position[h] - 1] * t_minus[position[low] - 1]
                pair_lambda = sigma * w * p / bias
                lam[h] -= pair_lambda
                lam[low] += pair_lambda
                hes[h] += sigma * pair_lambda * (1 - p)
                hes[low] += sigma * pair_lambda * (1 - p)
                total += 2 * pair_lambda
                cost = w * np.log1p(np.exp(-margin))
                costs[0, position[h] - 1] += weights[h] * cost / t_minus[position[low] - 1]
                costs[1, position[low] - 1] += weights[low] * cost / t_plus[position[h] - 1]
        factor = np.log2(1 + total) / total if normalize and total > 0 else 1.0
        grad += lam * factor * weights
        hess += hes * factor * weights
    return grad, hess, costs
