from cubiclab.models.bridge import bridge


def test_model_and_packets_agree_at_low_loss_and_part_where_timeouts_begin():
    # At lambda = 0.01/s and 0.1/s the packet simulation of the same CUBIC (cubic-2008 with
    # the model's C and beta) must land within 0.03 of the model's normalized throughput
    # (0.868 and 0.843 from Eq. 21). At 1/s the windows get too small for fast retransmit and
    # timeouts, which the model lacks, pull the packets well below it.
    d = bridge(loss_rates=(0.01, 0.1, 1.0), duration="150s").set_index("loss_rate")
    assert abs(d.loc[0.01, "sim"] - d.loc[0.01, "model"]) < 0.03
    assert abs(d.loc[0.1, "sim"] - d.loc[0.1, "model"]) < 0.03
    assert d.loc[1.0, "sim"] < d.loc[1.0, "model"] - 0.05
