def test_nim_game_through_dispatcher(shell):
    shell.signup("alice", "bob")
    a = shell.ok("nim challenge alice bob")
    assert a.subject == "New Nim Board 101 alice"
    r = shell.ok("nim move 101 alice pw-alice 3")
    assert r.subject == "Nim Board 101 bob", r.body
    print(r.body)
