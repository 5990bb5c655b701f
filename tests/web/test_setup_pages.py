"""Targets, load hosts, plans, schedules, tokens, scripts and imports through their pages:
what is saved, what is refused and why, and secrets that never come back."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from knox.models import get_token_model

from runs.models import Batch, LoadHost, Plan, Target
from tests.api.test_load_host_keys import REASONS, hostile_keys
from tests.servers import SSHKey

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sysbench"
TARGET_FIELDS = {
    "name": "db-2", "engine": "mariadb", "host": "127.0.0.1", "port": "3306",
    "database": "sbtest", "user": "bench",
}  # fmt: skip


def test_a_target_is_created_and_its_password_never_shown_again(client_in):
    response = client_in.post("/targets/new", {**TARGET_FIELDS, "password": "pw-never-shown"})
    target = Target.objects.get(name="db-2")
    assert response.status_code == 302 and target.password == "pw-never-shown"

    for url in ("/targets/", f"/targets/{target.pk}/", f"/targets/{target.pk}/edit"):
        assert b"pw-never-shown" not in client_in.get(url).content
    assert b"Leave empty to keep" in client_in.get(f"/targets/{target.pk}/edit").content


def test_an_empty_password_keeps_the_stored_one_and_clearing_removes_it(client_in, stored_target):
    fields = {**TARGET_FIELDS, "name": stored_target.name, "port": "3999", "database": "other"}
    client_in.post(f"/targets/{stored_target.pk}/edit", {**fields, "password": ""})
    stored_target.refresh_from_db()
    assert stored_target.database == "other" and stored_target.password == "s3cret-target-pw"

    client_in.post(f"/targets/{stored_target.pk}/edit", {**fields, "clear_password": "on"})
    stored_target.refresh_from_db()
    assert stored_target.password == ""


def test_a_target_on_a_system_schema_is_refused_naming_the_field(client_in):
    response = client_in.post("/targets/new", {**TARGET_FIELDS, "database": "mysql"})
    assert response.status_code == 200
    assert b"database: mysql is a system schema" in response.content
    assert not Target.objects.filter(name="db-2").exists()


def test_a_target_with_results_is_kept_with_a_clear_message(client_in, make_batch, stored_target):
    make_batch(threads=(1,), repeats=1, samples=1)
    response = client_in.post(f"/targets/{stored_target.pk}/delete", follow=True)
    assert Target.objects.filter(pk=stored_target.pk).exists()
    assert "finished results are never deleted" in response.content.decode()


def test_an_unused_target_is_deleted(client_in, user):
    target = Target.objects.create(name="spare", host="h", user="u", created_by=user)
    assert client_in.get(f"/targets/{target.pk}/delete").status_code == 200
    client_in.post(f"/targets/{target.pk}/delete")
    assert not Target.objects.filter(pk=target.pk).exists()


def test_test_connection_says_why_it_failed(client_in, stored_target):
    response = client_in.post(f"/targets/{stored_target.pk}/")
    html = response.content.decode()
    assert ("failed" in html and "error 2003" in html) or "error 2002" in html


def test_a_load_host_key_is_write_only(client_in):
    fields = {"name": "lh", "kind": "ssh", "address": "10.0.0.9", "port": "22", "user": "bench"}
    key = SSHKey.generate().private
    client_in.post("/load-hosts/new", {**fields, "private_key": key})
    host = LoadHost.objects.get(name="lh")
    for url in ("/load-hosts/", f"/load-hosts/{host.pk}/", f"/load-hosts/{host.pk}/edit"):
        assert b"PRIVATE KEY" not in client_in.get(url).content
    client_in.post(f"/load-hosts/{host.pk}/edit", {**fields, "private_key": "", "port": "2222"})
    host.refresh_from_db()
    assert host.port == 2222 and host.private_key == key


@pytest.mark.parametrize("kind", ["public", "passphrase"])
def test_a_hostile_key_is_refused_on_the_form_with_the_reason(client_in, kind):
    fields = {"name": "lh", "kind": "ssh", "address": "10.0.0.9", "port": "22", "user": "bench"}
    key = hostile_keys()[kind]

    page = client_in.post("/load-hosts/new", {**fields, "private_key": key}).content.decode()

    assert html.escape(REASONS[kind]) in page
    assert not LoadHost.objects.filter(name="lh").exists()


def test_the_old_address_of_load_hosts_leads_to_the_new_one(client_in):
    for old, new in (("/hosts/", "/load-hosts/"), ("/hosts/7/edit", "/load-hosts/7/edit")):
        response = client_in.get(old)
        assert (response.status_code, response["Location"]) == (302, new)


def test_an_ssh_host_needs_an_address(client_in):
    response = client_in.post("/load-hosts/new", {"name": "lh", "kind": "ssh", "port": "22"})
    assert b"address" in response.content and not LoadHost.objects.filter(name="lh").exists()


def test_a_local_host_cannot_be_scanned(client_in, user):
    user.is_staff = True  # the local host has no owner: staff's
    user.save()
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    response = client_in.post(f"/load-hosts/{local.pk}/scan")
    assert b"is not an SSH host" in response.content


PLAN_POST = {
    "name": "flush sweep",
    "test": "oltp_read_only",
    "threads": "1,2",
    "repeats": "3",
    "warmup_s": "0",
    "order_policy": "interleaved",
    "dataset_policy": "shared",
    "cleanup": "on",
    "schedule_kind": "",
    "schedule_timezone": "UTC",
    "opt_time": "30",
    "opt_tables": "1",
    "opt_table-size": "1000",
    "set__innodb_flush_log_at_trx_commit": ["1", "2"],
    "set__sync_binlog": ["0", "1"],
    "setting_name_0": "",
    "setting_values_0": "",
    "axis_name_0": "",
    "axis_values_0": "",
}


def plan_post(stored_target, **changes):
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    return {**PLAN_POST, "target": str(stored_target.pk), "load_host": str(local.pk), **changes}


def test_the_plan_editor_saves_the_matrix(client_in, stored_target):
    response = client_in.post("/plans/new", plan_post(stored_target))
    plan = Plan.objects.get(name="flush sweep")
    assert response.status_code == 302
    assert plan.threads == [1, 2] and plan.repeats == 3
    assert plan.options == {"time": 30, "tables": 1, "table-size": 1000}
    assert plan.server_settings == {
        "innodb_flush_log_at_trx_commit": ["1", "2"],
        "sync_binlog": ["0", "1"],
    }
    page = client_in.get(f"/plans/{plan.pk}/").content.decode()
    assert 'value="1,2"' in page and 'name="set__sync_binlog" value="1" checked' in page


def test_the_editor_keeps_the_seed_and_the_last_levels_hold(client_in, stored_target):
    # issue 24: the seed and a ramp's longer last level, written in the editor, kept
    changes = {"seed": "4242", "order_policy": "ramp", "hold_last_level_s": "90"}
    assert client_in.post("/plans/new", plan_post(stored_target, **changes)).status_code == 302
    plan = Plan.objects.get(name="flush sweep")
    assert plan.seed == 4242 and plan.auto == {"hold": {"last_level_s": 90}}
    page = client_in.get(f"/plans/{plan.pk}/").content.decode()
    assert 'name="seed" value="4242"' in page and 'name="hold_last_level_s" value="90"' in page


def test_the_plan_check_counts_cells_runs_and_time_before_saving(client_in, stored_target):
    answer = client_in.post("/plans/check", plan_post(stored_target, name="")).json()
    assert answer["ok"]
    assert (answer["estimate"]["cells"], answer["estimate"]["runs"]) == (8, 24)
    assert answer["estimate"]["total_text"] == "14 min"
    # The stored target is not running: the check says so instead of failing.
    assert any("could not be asked" in w for w in answer["warnings"])
    assert not Plan.objects.exists()


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"threads": "1,x"}, "threads", "'x' is not a whole number"),
        ({"opt_time": "-5"}, "time", "time"),
        ({"opt_tables": "1", "axis_name_0": "tables", "axis_values_0": "1,4"}, "tables", "both"),
        ({"setting_name_0": "innodb_log_file_size", "setting_values_0": "1G"}, "server_settings",
         "needs a server restart"),
        ({"test": "bulk_insert", "opt_tables": "", "opt_table-size": ""}, "dataset_policy",
         "fresh"),
        ({"repeats": "0"}, "repeats", "repeats"),
    ],
)  # fmt: skip
def test_plan_errors_name_the_field(client_in, stored_target, changes, field, words):
    answer = client_in.post("/plans/check", plan_post(stored_target, **changes)).json()
    assert not answer["ok"]
    [error] = answer["errors"]
    assert error["field"] == field and words in error["message"]

    page = client_in.post("/plans/new", plan_post(stored_target, **changes))
    assert page.status_code == 200 and words in html.unescape(page.content.decode())
    assert not Plan.objects.exists()


def test_a_schedule_set_in_the_editor_shows_on_the_schedules_page(client_in, stored_target):
    client_in.post(
        "/plans/new",
        plan_post(stored_target, schedule_kind="cron", schedule_cron="0 2 * * *",
                  schedule_timezone="Europe/Paris", schedule_enabled="on"),
    )  # fmt: skip
    plan = Plan.objects.get()
    assert plan.schedule is not None and plan.schedule.crontab.hour == "2"
    html = client_in.get("/schedules/").content.decode()
    assert "flush sweep" in html and "0 2 * * *" in html and "Europe/Paris" in html

    client_in.post(f"/plans/{plan.pk}/", plan_post(stored_target, schedule_kind=""))
    plan.refresh_from_db()
    assert plan.schedule is None


def test_a_plan_with_batches_is_kept(client_in, make_batch, stored_plan):
    make_batch(threads=(1,), repeats=1, samples=1)
    response = client_in.post(f"/plans/{stored_plan.pk}/delete", follow=True)
    assert Plan.objects.filter(pk=stored_plan.pk).exists()
    assert "is kept" in response.content.decode()


def test_a_token_is_shown_once_and_can_be_revoked(client_in, user):
    created = client_in.post("/tokens/", {"name": "ci", "expires_days": "30"}).content.decode()
    assert "<td>ci</td>" in created  # the token's name, now that tokens have one
    token = get_token_model().objects.get(user=user)
    start = created.index('class="mono token-once">') + len('class="mono token-once">')
    text = created[start : created.index("</p>", start)]
    assert text.startswith(token.token_key) and len(text) > len(token.token_key) + 20
    assert text not in client_in.get("/tokens/").content.decode()

    client_in.post(f"/tokens/{token.token_key}/revoke")
    assert not get_token_model().objects.filter(user=user).exists()


def test_only_permitted_users_upload_lua_scripts(client_in, user):
    script = {"name": "mine", "content": "function event() end"}
    assert client_in.post("/scripts/", script).status_code == 403
    user.user_permissions.add(Permission.objects.get(codename="upload_luascript"))
    assert client_in.post("/scripts/", script).status_code == 302
    assert "mine" in client_in.get("/scripts/").content.decode()


def test_a_log_is_previewed_then_saved(client_in):
    text = (FIXTURES / "oltp_read_write.txt").read_text()
    preview = client_in.post("/import", {"text": text, "action": "preview", "label": "old run"})
    html = preview.content.decode()
    assert preview.status_code == 200 and "What the log holds" in html
    assert "oltp_read_write" in html or "First samples" in html
    assert not Batch.objects.exists()

    saved = client_in.post("/import", {"text": text, "action": "save", "label": "old run"})
    batch = Batch.objects.get()
    assert saved.status_code == 302 and saved["Location"] == f"/batches/{batch.pk}/results"
    assert batch.label == "old run" and batch.runs.get().samples.count() > 0
    assert client_in.get(saved["Location"]).status_code == 200


def test_an_uploaded_log_is_previewed(client_in):
    with (FIXTURES / "cpu.txt").open("rb") as f:
        html = client_in.post("/import", {"upload": f, "action": "preview"}).content.decode()
    assert "What the log holds" in html and "cpu" in html


def test_an_upload_larger_than_the_limit_is_refused_with_a_message(client_in, settings):
    settings.BENCHDASH_MAX_LOG_MB = 1
    big = SimpleUploadedFile("big.log", b"x" * 3 * 2**20)

    response = client_in.post("/import", {"upload": big, "action": "preview"})

    assert response.status_code == 413
    assert "the log is larger than 1 MB" in response.content.decode()
    assert not Batch.objects.exists()


def test_a_large_uploaded_log_is_previewed_and_chosen_again_to_save(client_in):
    line = b"[ %ds ] thds: 2 eps: 8481.73 lat (ms,95%%): 0.28\n"
    log = b"sysbench 1.0.20\n" + b"".join(line % t for t in range(1, 60_001))
    assert len(log) > 2 * 2**20

    page = client_in.post(
        "/import", {"upload": SimpleUploadedFile("cpu.log", log), "action": "preview"}
    ).content.decode()

    assert "What the log holds" in page and "<dd>60000</dd>" in page
    assert 'id="reupload"' in page
    assert "8481.73" not in page.split('id="import-preview"')[0]  # not carried in the text box
    assert not Batch.objects.exists()


def test_an_empty_import_is_refused(client_in):
    html = client_in.post("/import", {"text": "  ", "action": "preview"}).content.decode()
    assert "Paste a log or choose a file" in html


def test_the_editor_saves_the_auto_modes_and_shows_them_again(client_in, stored_target):
    response = client_in.post(
        "/plans/new",
        plan_post(stored_target, threads="1", repeats_auto="on", repeats_target_pct="3",
                  repeats_max="6", threads_auto="on", threads_max="32", threads_slo_ms="50"),
    )  # fmt: skip

    assert response.status_code == 302
    plan = Plan.objects.get()
    assert plan.auto == {
        "repeats": {"target_pct": 3.0, "max": 6, "margin_pct": 2.0},  # margin: its default
        "threads": {"max": 32, "slo_p95_ms": 50.0, "rise_pct": 5.0},
    }
    page = client_in.get(f"/plans/{plan.pk}/").content.decode()
    assert 'id="id_threads_auto" checked' in page
    assert 'name="threads_max" value="32"' in page


def test_the_editor_sets_the_equivalence_margin_of_repeats_auto(client_in, stored_target):
    # issue 24: the margin (auto.repeats.margin_pct) was settable through the API alone
    page = client_in.get("/plans/new").content.decode()
    assert 'name="repeats_margin_pct"' in page and "Equivalence margin ± (%)" in page
    fields = plan_post(stored_target, repeats_auto="on", repeats_margin_pct="1.5")
    assert client_in.post("/plans/new", fields).status_code == 302

    plan = Plan.objects.get()
    assert plan.auto == {"repeats": {"target_pct": 2.0, "max": 5, "margin_pct": 1.5}}
    page = client_in.get(f"/plans/{plan.pk}/").content.decode()
    assert 'name="repeats_margin_pct" value="1.5"' in page


@pytest.mark.parametrize("margin", ["0", "80", "wide"])
def test_the_editor_refuses_a_margin_out_of_bounds(client_in, stored_target, margin):
    fields = plan_post(stored_target, repeats_auto="on", repeats_margin_pct=margin)
    answer = client_in.post("/plans/check", fields).json()
    assert not answer["ok"]
    [error] = answer["errors"]
    assert error["field"] == "repeats_margin_pct"
    page = client_in.post("/plans/new", fields).content.decode()
    assert not Plan.objects.exists() and error["message"] in page


def test_the_editor_refuses_threads_auto_with_a_thread_list(client_in, stored_target):
    answer = client_in.post(
        "/plans/check", plan_post(stored_target, threads_auto="on", threads_max="8")
    ).json()
    assert not answer["ok"]
    [error] = answer["errors"]
    assert error["field"] == "threads" and "starts at 1 thread" in error["message"]


def test_the_editor_saves_more_load_hosts_and_refuses_a_cell_it_cannot_divide(
    client_in, stored_target, user
):
    far = [
        LoadHost.objects.create(
            name=f"far-{i}", kind="ssh", address=f"10.0.0.{i}", user="b", created_by=user
        )
        for i in (1, 2)
    ]
    fields = plan_post(stored_target, load_host=str(far[0].pk), threads="2,4")
    response = client_in.post("/plans/new", {**fields, "extra_load_hosts": [str(far[1].pk)]})
    assert response.status_code == 302
    plan = Plan.objects.get()
    assert list(plan.extra_load_hosts.all()) == [far[1]] and plan.load_split == "divide"
    page = client_in.get(f"/plans/{plan.pk}/").content.decode()
    assert f'<option value="{far[1].pk}" selected>far-2</option>' in page

    odd = {**fields, "threads": "1,4", "extra_load_hosts": [str(far[1].pk)]}
    refused = client_in.post(f"/plans/{plan.pk}/", odd)
    assert refused.status_code == 200
    assert "cannot be divided between 2 load hosts" in html.unescape(refused.content.decode())


def test_the_editor_keeps_the_targets_in_the_users_order(client_in, stored_target, user):
    def target(name: str) -> Target:
        return Target.objects.create(
            name=name, engine="mariadb", host="127.0.0.1", port=3999, database="sbtest",
            user="bench", created_by=user,
        )  # fmt: skip

    second, third = target("db-2"), target("db-3")
    # Several selects of one name: posted in the page's order, the user's.
    post = plan_post(stored_target, server_targets=[str(third.pk), "", str(second.pk)])

    assert client_in.post("/plans/new", post).status_code == 302
    plan = Plan.objects.get(name="flush sweep")
    assert [link.target for link in plan.plan_servers.all()] == [third, second]
    page = client_in.get(f"/plans/{plan.pk}/").content.decode()
    chosen = re.findall(
        r'<option value="(\d+)" selected>', page.split('name="server_targets"', 1)[1]
    )
    assert chosen[:2] == [str(third.pk), str(second.pk)]
    assert page.count('name="server_targets"') == 4  # the two chosen and two spare

    # Saved again as shown, reordered: the new order is kept.
    again = plan_post(stored_target, server_targets=[str(second.pk), str(third.pk), "", ""])
    assert client_in.post(f"/plans/{plan.pk}/", again).status_code == 302
    assert [link.target for link in plan.plan_servers.all()] == [second, third]
    twice = plan_post(stored_target, server_targets=[str(second.pk), str(second.pk)])
    refused = client_in.post(f"/plans/{plan.pk}/", twice).content.decode()
    assert "db-2 is chosen twice" in refused
    assert [link.target for link in plan.plan_servers.all()] == [second, third]
    assert "Servers: targets compared" in page
    # The service's refusal (servers.targets, as the API names it) marks the editor's field.
    itself = plan_post(stored_target, server_targets=[str(stored_target.pk)])
    error = client_in.post("/plans/check", itself).json()["errors"][0]
    assert error["field"] == "server_targets" and "listed twice" in error["message"], error


class _FormReader(HTMLParser):
    """The fields a browser posts from one form, in document order (issue 37: what a plan
    re-opened and saved unchanged sends back)."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id, self.inside = form_id, False
        self.fields: list[tuple[str, str]] = []
        self._select: str | None = None
        self._options: list[tuple[str, bool]] = []
        self._textarea: str | None = None
        self._multiple = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.inside = a.get("id") == self.form_id
        if not self.inside:
            return
        kind = (a.get("type") or "text").lower()
        if tag == "input" and a.get("name") and kind not in ("submit", "button"):
            if kind not in ("checkbox", "radio") or "checked" in a:
                self.fields.append(
                    (a["name"], a.get("value") or ("on" if kind == "checkbox" else ""))
                )
        elif tag == "select":
            self._select, self._options = a.get("name"), []
            self._multiple = "multiple" in a
        elif tag == "option" and self._select is not None:
            self._options.append((a.get("value") or "", "selected" in a))
        elif tag == "textarea":
            self._textarea = a.get("name") or ""
            self.fields.append((self._textarea, ""))

    def handle_data(self, data):
        if self._textarea is not None:
            name, text = self.fields.pop()
            self.fields.append((name, text + data))

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "select" and self._select is not None:
            chosen = [v for v, sel in self._options if sel]
            if not chosen and self._options and not self._multiple:
                chosen = [self._options[0][0]]  # a single select posts its first option
            self.fields += [(self._select, value) for value in chosen]
            self._select = None
        elif tag == "textarea":
            self._textarea = None


def browser_post(page: str, form_id: str) -> dict[str, list[str]]:
    reader = _FormReader(form_id)
    reader.feed(page)
    posted: dict[str, list[str]] = {}
    for name, value in reader.fields:
        posted.setdefault(name, []).append(html.unescape(value).strip("\n"))
    return posted


def test_a_plan_saved_unchanged_keeps_its_baseline_first(client_in, stored_target):
    # issue 37: re-opening a plan whose flush values are 1,0 and pressing Save made them 0,1,
    # the checkboxes posting in their own order, and the next batch's baseline changed.
    client_in.post(
        "/plans/new",
        plan_post(stored_target, **{"set__innodb_flush_log_at_trx_commit": ["1", "0"],
                                    "set__sync_binlog": ["1", "0"]}),
    )  # fmt: skip
    plan = Plan.objects.get(name="flush sweep")
    assert plan.server_settings["innodb_flush_log_at_trx_commit"] == ["1", "0"]

    page = client_in.get(f"/plans/{plan.pk}/").content.decode()
    posted = browser_post(page, "plan-editor")
    assert posted["set__innodb_flush_log_at_trx_commit"] == ["1", "0"]
    response = client_in.post(f"/plans/{plan.pk}/", {**posted, "action": "save"})
    assert response.status_code == 302
    plan.refresh_from_db()
    assert plan.server_settings == {
        "innodb_flush_log_at_trx_commit": ["1", "0"],
        "sync_binlog": ["1", "0"],
    }


def test_the_plan_check_says_how_long_the_auto_modes_may_take(client_in, stored_target):
    # issue 37: the editor's "≈ 17 s" for a threads search that took 160 s.
    answer = client_in.post(
        "/plans/check",
        plan_post(stored_target, name="", threads="1", threads_auto="on", threads_max="8",
                  **{"set__innodb_flush_log_at_trx_commit": ["1"], "set__sync_binlog": ["1"]}),
    ).json()  # fmt: skip
    assert answer["ok"], answer
    shown = answer["estimate"]
    assert (shown["runs"], shown["most_runs"]) == (3, 3 * 6 + 3 * 0)
    assert shown["most_s"] > shown["total_s"] * 5
