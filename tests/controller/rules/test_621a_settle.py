"""Settlement: Pai Gow Wager, vigorish, Pair Fortunes, player bank and co-bank (§§ 621a.8, 621a.9, 621a.11)."""

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from controller.rules.settlement import table_net
from controller.rules.tiles import FULL_SET, make_setting, settings
from controller.rules.tiles_houseway import house_way
from controller.rules.tiles_settle import (
    CoBankSplitError,
    DealerWager,
    PlayerWager,
    can_bank,
    dealer_wager_against_bank,
    select_bank,
    settle_bank,
    settle_pai_gow,
    settle_pair_fortunes,
    vigorish,
)


@pytest.mark.parametrize(
    "won,vig",
    [
        (10000, 500),
        (1000, 50),
        (500, 25),
        (100, 25),
        (1500, 75),
        (2500, 125),
        (700, 50),
        (2100, 125),
        (3000, 150),
        (25, 25),
        (24, 2),  # under 25 cents: rounding up to 25 would take more than the win (reading 621a #21)
        (20, 1),
        (1, 1),
        (0, 0),
    ],
)
def test_vigorish_examples_621a_11_a(won, vig):
    assert vigorish(won) == vig


@hsettings(max_examples=300)
@given(st.integers(1, 10_000_000))
def test_vigorish_multiple_of_25_and_at_least_5_percent(won):
    """At least 5%, never more than the amount won; a multiple of 25 cents (the next one up)
    whenever that is not more than the win, else 5% up to the whole cent (reading 621a #21)."""
    v = vigorish(won)
    assert 20 * v >= won and v <= won
    if won >= 25:
        assert v % 25 == 0 and 20 * (v - 25) < won
    else:
        assert 20 * (v - 1) < won


DEALER = make_setting("6-6 1-6", "2-2 3-3")  # 9 (Twelve high) / 0


def test_pai_gow_win_pays_even_money_less_vig_621a_8_i():
    r = settle_pai_gow(1, 2000, make_setting("1-1 1-1", "4-4 1-5"), DEALER)
    assert (r.outcome, r.net, r.commission, r.pays) == ("win", 1900, 100, "1 to 1")
    r = settle_pai_gow(1, 700, make_setting("1-1 1-1", "4-4 1-5"), DEALER)
    assert (r.net, r.commission) == (650, 50)  # 35 cents rounded up to 50


def test_pai_gow_tie_and_loss_621a_8_g_h():
    r = settle_pai_gow(2, 2000, make_setting("1-1 1-1", "4-6 5-5"), DEALER)
    assert (r.outcome, r.net, r.commission) == ("push", 0, 0)
    r = settle_pai_gow(2, 2000, make_setting("6-6 2-5", "4-6 5-5"), DEALER)
    assert (r.outcome, r.net) == ("lose", -2000) and "copy: high" in r.detail


def test_surrender_621a_8_e():
    r = settle_pai_gow(3, 2000, None, DEALER)
    assert (r.outcome, r.net) == ("surrender", -2000)
    # the Pair Fortunes Wager is still settled on the surrendered tiles
    assert settle_pair_fortunes(3, 500, "2-4 1-2 6-6 6-6").net == 150000


@pytest.mark.parametrize(
    "tiles,net",
    [
        ("2-4 1-2 6-6 6-6", 300 * 500),
        ("1-1 1-1 3-3 3-3", 25 * 500),
        ("2-4 1-2 5-5 1-4", 8 * 500),
        ("3-4 2-5 6-6 1-1", 4 * 500),
        ("6-6 6-6 1-1 2-4", 3 * 500),
        ("6-6 1-1 4-5 2-6", -500),
    ],
)
def test_pair_fortunes_621a_11_b(tiles, net):
    assert settle_pair_fortunes(4, 500, tiles).net == net


def test_bad_amounts():
    with pytest.raises(ValueError):
        settle_pai_gow(1, 0, DEALER, DEALER)
    with pytest.raises(ValueError):
        settle_pair_fortunes(1, 100, "6-6 6-6 6-6 1-1")


BANK = make_setting("4-4 4-4", "1-6 2-2")  # pair of Eights / 1 point


def test_player_bank_621a_9_o_p_q():
    wagers = [
        PlayerWager(1, 2000, make_setting("6-6 6-6", "4-5 3-5")),  # pair > pair, 7 > 1: wins
        PlayerWager(2, 1000, make_setting("1-3 1-3", "1-5 1-4")),  # pair of Fours < Eights; 1 vs 1: lose
        PlayerWager(5, 3000, None),  # surrendered
    ]
    dealer = make_setting("1-1 1-1", "5-6 5-5")  # Twos > Eights, 1 (5-6 high) vs 1 (1-6): win
    s = settle_bank(3, BANK, wagers, dealer=DealerWager(1500, dealer))
    by = {(r.seat, r.wager): r for r in s.results}
    assert by[(1, "base")].net == 1900 and by[(1, "base")].commission == 100
    assert by[(2, "base")].net == -1000 and by[(5, "base")].net == -3000
    assert s.dealer is not None and s.dealer.outcome == "win" and s.dealer_net == 1500
    # center: 1000 + 3000 lost; paid 2000 + 1500 -> surplus 500, bank pays 5% = 25
    assert s.surplus == 500 and by[(3, "bank")].net == 475 and by[(3, "bank")].commission == 25
    assert table_net(list(s.results)) == s.house_net == 1500 + 100 + 25


def test_player_bank_without_a_dealer_wager_621a_9_n_p_q():
    """The dealer wagers against the bank only when it says so (§ 621a.9(n)): without it the
    center is the players' losses less their wins alone (§ 621a.9(p)), and the bank keeps the
    surplus less its 5% (§ 621a.9(q) for the winners)."""
    wagers = [
        PlayerWager(1, 2000, make_setting("6-6 6-6", "4-5 3-5")),  # wins 1900 after 100
        PlayerWager(2, 3000, make_setting("1-3 1-3", "1-5 1-4")),  # loses 3000
    ]
    s = settle_bank(3, BANK, wagers)
    assert s.dealer is None and s.dealer_net == 0
    assert [r.seat for r in s.results] == [1, 2, 3]
    # center 3000 - paid 2000 = surplus 1000; the bank's 5% = 50
    assert s.surplus == 1000 and s.results[-1].net == 950 and s.results[-1].commission == 50
    assert table_net(list(s.results)) == s.house_net == 100 + 50


def test_player_bank_shortfall_paid_by_bank():
    wagers = [PlayerWager(1, 5000, make_setting("6-6 6-6", "4-5 3-5"))]
    s = settle_bank(2, BANK, wagers)
    bank = s.results[-1]
    assert s.surplus == -5000 and bank.net == -5000 and bank.commission == 0 and bank.outcome == "lose"
    assert table_net(list(s.results)) == s.house_net == 250


def test_cobank_621a_9_r():
    wagers = [
        PlayerWager(1, 2000, make_setting("6-6 6-6", "4-5 3-5")),  # win
        PlayerWager(2, 6000, make_setting("1-3 1-3", "1-5 1-4")),  # lose
    ]
    s = settle_bank(4, BANK, wagers, cobank=True)
    # surplus 4000: house keeps 2000, 5% of the co-bank's 2000 = 100
    assert s.surplus == 4000 and s.house_share == 2000 and s.results[-1].net == 1900
    assert table_net(list(s.results)) == s.house_net == 2000 + 100 + 100
    s = settle_bank(4, BANK, wagers[:1], cobank=True)  # shortfall 2000 split 1000 / 1000
    assert s.house_share == -1000 and s.results[-1].net == -1000
    with pytest.raises(CoBankSplitError):
        settle_bank(4, BANK, [PlayerWager(1, 2025, wagers[0].setting)], cobank=True)
    with pytest.raises(ValueError):
        settle_bank(4, BANK, wagers, cobank=True, dealer=DealerWager(500, BANK))


def test_bank_input_errors():
    with pytest.raises(ValueError):
        settle_bank(1, BANK, [PlayerWager(1, 100, BANK)])  # the bank wagers on one area only
    with pytest.raises(ValueError):
        settle_bank(1, BANK, [PlayerWager(2, 100, BANK), PlayerWager(2, 100, BANK)])
    with pytest.raises(ValueError, match="positive amount"):
        settle_bank(1, BANK, [PlayerWager(2, 100, BANK)], dealer=DealerWager(-100, BANK))
    no_wager = settle_bank(1, BANK, [PlayerWager(2, 100, BANK)], dealer=DealerWager(0, BANK))
    assert no_wager.dealer is None and no_wager.dealer_net == 0


def test_dealer_wager_against_bank_621a_9_h():
    assert dealer_wager_against_bank(2500) == 2500
    assert dealer_wager_against_bank(2500, directed=1000) == 1000
    assert dealer_wager_against_bank(2500, directed=0) == 0
    assert dealer_wager_against_bank(2500, cobank=True) == 0
    assert dealer_wager_against_bank(2500, rules_submission_amount=5000) == 5000
    with pytest.raises(ValueError):
        dealer_wager_against_bank(2500, directed=3000)


def test_select_bank_621a_9_b_c_d():
    seats = [1, 2, 4, 6]
    # start of the game: no player bank (§ 621a.9(b))
    assert select_bank(1, seats, {1: True}, start_of_game=True).bank is None
    sel = select_bank(1, seats, {1: True})
    assert sel.bank == 1 and sel.offered == (1,) and sel.next_first_offer == 2
    # no two consecutive rounds; declined offers pass counterclockwise
    sel = select_bank(2, seats, {1: True, 2: False, 4: False, 6: True}, previous_bank=1)
    assert sel.bank == 6 and sel.offered == (2, 4, 6) and sel.next_first_offer == 1
    sel = select_bank(2, seats, {}, previous_bank=1)
    assert sel.bank is None and sel.offered == (2, 4, 6) and sel.next_first_offer == 4
    # ineligible players are not offered (§ 621a.9(d))
    sel = select_bank(1, seats, lambda s: True, eligible=[4, 6])
    assert sel.bank == 4 and sel.offered == (4,)
    assert can_bank(wagered_last_dealer_round=True, chips_cents=5000, others_wagers_cents=5000)
    assert not can_bank(wagered_last_dealer_round=True, chips_cents=4999, others_wagers_cents=5000)
    assert not can_bank(wagered_last_dealer_round=False, chips_cents=10**6, others_wagers_cents=0)


four = st.lists(st.integers(0, 31), min_size=16, max_size=16, unique=True)


@hsettings(max_examples=150)
@given(
    four,
    st.lists(st.integers(1, 400).map(lambda k: 25 * k), min_size=3, max_size=3),
    st.integers(0, 400).map(lambda k: 25 * k),
    st.booleans(),
    st.integers(0, 2),
)
def test_bank_settlement_conserves_money(ix, amounts, dealer_wager, cobank, surrender_choice):
    tiles = [FULL_SET[i] for i in ix]
    bank = house_way(tiles[0:4])
    dealer = house_way(tiles[4:8])
    ws = []
    for k, seat in enumerate((2, 3, 5)):
        setting = settings(tiles[8 + 4 * k : 12 + 4 * k] if k < 2 else tiles[12:16])[surrender_choice]
        ws.append(PlayerWager(seat, amounts[k], None if (k == 0 and surrender_choice == 2) else setting))
    try:
        s = settle_bank(1, bank, ws, dealer=DealerWager(0 if cobank else dealer_wager, dealer), cobank=cobank)
    except CoBankSplitError:
        assert cobank
        return
    assert table_net(list(s.results)) == s.house_net
    for r in s.results:
        if r.wager == "base" and r.outcome == "win":
            assert r.commission % 25 == 0 and 20 * r.commission >= r.amount and r.net == r.amount - r.commission
        if r.wager == "base" and r.outcome in ("lose", "surrender"):
            assert r.net == -r.amount
    bank_r = s.results[-1]
    assert bank_r.commission % 25 == 0


@hsettings(max_examples=150)
@given(st.lists(st.integers(0, 31), min_size=8, max_size=8, unique=True), st.integers(1, 2000).map(lambda k: 25 * k))
def test_pai_gow_vs_dealer_conserves_money(ix, amount):
    tiles = [FULL_SET[i] for i in ix]
    r = settle_pai_gow(1, amount, house_way(tiles[:4]), house_way(tiles[4:]))
    assert table_net([r]) == -r.net
    assert r.net in (-amount, 0, amount - vigorish(amount))
