"""Row softmax in one pass over the data for the statistics and one to write: the running
maximum and the running sum rescaled as the maximum grows (online softmax), then
exp(x - max) / sum. Columns past the tensor's end are masked to -inf, so ragged widths work.
"""

import torch

import hk
from common import check, run, timed

BLOCK = 64


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, 16)))
def softmax(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    row = hk.arch.block_idx.y
    tile = hk.RT(hk.fp32, 16, BLOCK)
    stat = hk.RV(hk.fp32, 16, "col")
    tiles = hk.cdiv(x.cols, BLOCK)
    col = hk.iota(tile, "col")

    m = hk.neg_infty(stat)
    s = hk.zeros(stat)
    for j in hk.range(tiles):
        t = hk.where(col + j * BLOCK < x.cols, x[0, 0, row, j].load(tile), float("-inf"))
        m_new = hk.maximum(m, hk.row_max(t))
        s = s * hk.math.exp(m - m_new) + hk.row_sum(hk.math.exp(hk.sub_row(t, m_new)))
        m = m_new

    for j in hk.range(tiles):
        t = hk.where(col + j * BLOCK < x.cols, x[0, 0, row, j].load(tile), float("-inf"))
        o[0, 0, row, j] = hk.div_row(hk.math.exp(hk.sub_row(t, m)), s)


SHAPES = [(64, 512), (37, 100)]  # the second is ragged in rows and columns


def checks(device, repeat):
    for rows, cols in SHAPES:
        x = torch.randn(rows, cols, device=device) * 4
        out = torch.empty_like(x)
        softmax(x, out)
        check("softmax %dx%d" % (rows, cols), out, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)
        if repeat:
            print("  %.1f us" % (timed(lambda: softmax(x, out), repeat) * 1e6))


if __name__ == "__main__":
    run([(softmax, {})], checks)
