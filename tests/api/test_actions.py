"""The API's actions: host-key pinning on a real sshd, preflight, cancel, log import."""

from __future__ import annotations

from pathlib import Path

from runs.models import Batch, LoadHost, Plan, Status

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sysbench"


def test_a_host_key_is_scanned_then_pinned_once_its_fingerprint_is_confirmed(
    api, sshd_server, ssh_key
):
    host = api.post(
        "/api/v1/load-hosts",
        json={
            "name": "lg1",
            "kind": "ssh",
            "address": sshd_server.host,
            "port": sshd_server.port,
            "user": sshd_server.user,
            "private_key": ssh_key.private,
        },
    ).json()

    scan = api.post(f"/api/v1/load-hosts/{host['id']}/scan")
    assert scan.status_code == 200, scan.text
    fingerprint = scan.json()["fingerprint"]
    assert fingerprint.startswith("SHA256:")
    assert scan.json()["seen_host_key"] == sshd_server.host_key.public.strip()

    wrong = api.post(
        f"/api/v1/load-hosts/{host['id']}/confirm-host-key", json={"fingerprint": "SHA256:nope"}
    )
    assert wrong.status_code == 400
    assert wrong.json()["field"] == "fingerprint"
    assert LoadHost.objects.get(pk=host["id"]).host_key == ""

    right = api.post(
        f"/api/v1/load-hosts/{host['id']}/confirm-host-key", json={"fingerprint": fingerprint}
    )
    assert right.status_code == 200, right.text
    assert right.json()["host_key"] == sshd_server.host_key.public.strip()
    assert not any(ssh_key.private.strip() in body for body in api.bodies)


def test_a_local_host_has_no_key_to_scan(api, owner, local_host):
    owner.is_staff = True  # the local host has no owner: staff's
    owner.save()
    answer = api.post(f"/api/v1/load-hosts/{local_host.pk}/scan")

    assert answer.status_code == 400
    assert answer.json()["message"]


def test_preflight_reports_what_would_break_a_batch(api, offline_target, local_host):
    plan = Plan.objects.create(
        name="inserts", target=offline_target, load_host=local_host, threads=[1]
    )

    report = api.post(f"/api/v1/plans/{plan.pk}/preflight")

    assert report.status_code == 200, report.text
    assert report.json()["ok"] is False
    failed = [s for s in report.json()["checks"] if s["status"] == "failed"]
    assert failed, report.json()
    assert not Batch.objects.exists()


def test_a_queued_batch_is_cancelled(api, owner, offline_target, local_host, make_batch):
    plan = Plan.objects.create(
        name="inserts", target=offline_target, load_host=local_host, threads=[1],
        created_by=owner,
    )  # fmt: skip
    batch = make_batch(plan)

    answer = api.post(f"/api/v1/batches/{batch.pk}/cancel")

    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == Status.CANCELLED
    assert answer.json()["cancel_requested_at"] is not None


def test_a_sysbench_log_is_imported_like_import_log_does(api, offline_target):
    log = (FIXTURES / "cpu.txt").read_bytes()

    dry = api.post("/api/v1/imports", files={"log": ("cpu.txt", log)}, data={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    assert dry.json()["batch_id"] is None
    assert not Batch.objects.exists()

    imported = api.post(
        "/api/v1/imports",
        files={"log": ("cpu.txt", log)},
        data={"target": offline_target.pk, "label": "old laptop"},
    )
    assert imported.status_code == 201, imported.text
    assert imported.json()["test"] == "cpu"
    assert imported.json()["sample_count"] == len(imported.json()["first_samples"]) > 0
    assert "samples" not in imported.json()  # a link to them, not every one
    batch = api.get(f"/api/v1/batches/{imported.json()['batch_id']}").json()
    assert (batch["launched_by"], batch["label"], batch["runs_total"]) == (
        "import",
        "old laptop",
        1,
    )
    samples = api.get(imported.json()["samples_url"]).json()
    assert len(samples["results"]) == imported.json()["sample_count"]


def test_an_upload_larger_than_the_limit_is_refused_as_it_arrives(api, settings):
    settings.BENCHDASH_MAX_LOG_MB = 1

    answer = api.post("/api/v1/imports", files={"log": ("big.log", b"x" * 3 * 2**20)})

    assert answer.status_code == 413, answer.text
    assert answer.json() == {"field": "log", "message": "the log is larger than 1 MB"}
    assert not Batch.objects.exists()


def test_a_figure_that_overflows_is_an_unrecognised_line_not_a_server_error(api):
    log = (FIXTURES / "oltp_read_write.txt").read_text().replace("tps: 517.39", "tps: 1e999")

    answer = api.post("/api/v1/imports", files={"log": ("inf.log", log.encode())})

    assert answer.status_code == 201, answer.text
    assert answer.json()["unrecognised_lines"] == 1
    assert answer.json()["sample_count"] == 2


def test_a_runs_raw_log_comes_as_sysbench_printed_it(api, anonymous, offline_target):
    log = (FIXTURES / "oltp_forced_shutdown.txt").read_bytes()
    imported = api.post(
        "/api/v1/imports", files={"log": ("forced.txt", log)}, data={"target": offline_target.pk}
    )
    run_id = imported.json()["run_id"]

    answer = api.get(f"/api/v1/runs/{run_id}/log")

    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert answer.text.splitlines() == log.decode().splitlines()
    assert api.get(f"/api/v1/runs/{run_id + 1000}/log").status_code == 404
    assert anonymous.get(f"/api/v1/runs/{run_id}/log").status_code in (401, 403)
