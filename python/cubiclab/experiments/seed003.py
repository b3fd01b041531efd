"""Seed 003: Shanker, "Congestion Control II: CUBIC" (2018 blog post). CUBIC against Tahoe,
alone and together, on a low-BDP and a high-BDP link, in a notebook simulator; its
throughputs (in kbps) are those of that toy model, so only their ratios are compared."""

from __future__ import annotations

import pandas as pd

from cubiclab.experiments import plotting
from cubiclab.experiments.base import Experiment, approx, at_least, check, register, vary
from cubiclab.experiments.common import duration_s, group_means
from cubiclab.sweep import Run

LINKS = {"low": "2.64Mbps", "high": "50Mbps"}
TOY = ("The blog's numbers come from its own notebook simulator (throughputs of a few kbps on a 2.64 Mbps link), "
       "ours from a packet simulator with Linux CUBIC")


@register
class CubicTahoe(Experiment):
    name = "s003-cubic-tahoe"
    seed = "003"
    figure = "blog figures"
    title = "CUBIC against Tahoe, alone and together, on a low-BDP and a high-BDP link"
    setup = ("Low BDP: 2.64 Mbps, RTT 88 ms (the blog's link); high BDP: 50 Mbps, 88 ms (unstated in the blog); "
             "buffer 100% BDP. CUBIC (Linux v2.3) alone, Tahoe alone, and one of each together. Throughput: mean "
             "over the run after its first 10%.")

    def runs(self, quick):
        sc = self.scenario("s003_cubic_tahoe")
        dur = "60s" if quick else "120s"
        runs = []
        for link, rate in LINKS.items():
            base = vary(sc, rate=rate, duration=dur)
            for mode in ("cubic", "tahoe", "together"):
                s = vary(base)
                if mode != "together":
                    s.flows = [g for g in s.flows if g.name == mode]
                runs.append(Run(s, {"link": link, "mode": mode}))
        return runs

    def analyse(self, sweep, quick, outdir):
        rows = []
        fig, axes = plotting.new(3, 2, width=4.5, height=3.4)
        for k, (run, res) in enumerate(sweep.items()):
            g = group_means(res, 0.1 * duration_s(res), column="goodput_bps")
            rows.append({**run.tags, "cubic_bps": g.get("cubic"), "tahoe_bps": g.get("tahoe")})
            r, c = (0 if run.tags["link"] == "low" else 1), ("cubic", "tahoe", "together").index(run.tags["mode"])
            plotting.cwnd_axes(axes[r, c], res, f"{run.tags['link']} BDP ({LINKS[run.tags['link']]}, 88 ms): "
                               f"{run.tags['mode']}", labels={"cubic": "CUBIC", "tahoe": "Tahoe"}, lw=0.6)
        figs = plotting.finish(fig, outdir, "cubic_tahoe", "CUBIC and Tahoe (cf. seed 003)")
        d = pd.DataFrame(rows)
        v = d.set_index(["link", "mode"])
        alone = v.loc[("low", "cubic"), "cubic_bps"] / v.loc[("low", "tahoe"), "tahoe_bps"]
        low = v.loc[("low", "together"), "cubic_bps"] / v.loc[("low", "together"), "tahoe_bps"]
        high = v.loc[("high", "together"), "cubic_bps"] / v.loc[("high", "together"), "tahoe_bps"]
        gain = v.loc[("low", "together"), "cubic_bps"] / v.loc[("low", "cubic"), "cubic_bps"]
        claims = [
            approx("alone_low", "Alone on the low-BDP link CUBIC gets more than Tahoe (14.56 vs 10.42 kbps)", 1.40,
                   alone, 0.3, paper="×1.40", note="Alone on a link with a BDP of buffer, both fill most of it in a "
                   "packet simulator; " + TOY + "."),
            at_least("cubic_wins_low", "Sharing the low-BDP link, CUBIC takes more than Tahoe (CUBIC / Tahoe)",
                     "×2.85 (17.50 vs 6.15 kbps)", low, 1.0, robust=True),
            at_least("cubic_wins_high", "Sharing the high-BDP link, CUBIC takes far more than Tahoe (CUBIC / Tahoe)",
                     "×5.7 (37.7 vs 6.63 kbps)", high, 1.0, robust=True),
            check("worse_at_high_bdp", "Tahoe suffers more on the high-BDP link (CUBIC / Tahoe ratio larger there)",
                  "×5.7 > ×2.85", f"×{high:.2f} vs ×{low:.2f}", bool(high > low), "high > low", note=TOY + "."),
            check("better_together", "CUBIC does better sharing the low-BDP link with Tahoe than alone (17.50 > 14.56 "
                  "kbps)", "×1.20", f"×{gain:.2f}", bool(gain > 1.0), "> 1",
                  note="A flow alone on a link gets at least what it gets while sharing it when the link is the only "
                       "limit; the blog's odd result comes from its notebook model. " + TOY + "."),
        ]
        return self.outcome(data={"cubic_tahoe": d}, figures=figs, claims=claims)
