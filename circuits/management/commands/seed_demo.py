"""Create the demo user and the demo circuits (idempotent): each examples/circuits/*.json,
and each SQL view file (examples/sql/*.sql) and Datalog program (examples/datalog/*.dl)
with a .meta.json beside it, compiled, its text kept in the document's metadata.source
(the editor's SQL / Datalog pane shows it); and the PostgreSQL demo (circuits/demo_postgres.py:
its database made ready when ./scripts/run started one, seeded either way)."""
import json
import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from circuits import demo_postgres, services
from circuits.frontends import compiled_source
from circuits.models import Circuit


class Command(BaseCommand):
    help = "Create the demo user (DEMO_USER/DEMO_PASSWORD, default demo/demo) and demo circuits."

    def handle(self, *args, **options):
        username = os.environ.get("DEMO_USER", "demo")
        password = os.environ.get("DEMO_PASSWORD", "demo")
        User = get_user_model()
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_password(password)
            user.save()
            self.stdout.write(f"created user {username!r}")
        for meta, document in demos(settings.BASE_DIR / "examples"):
            if Circuit.objects.filter(owner=user, name=meta["name"]).exists():
                continue
            services.create_circuit(
                user, meta["name"], meta.get("description", ""), meta.get("visibility", "private"), document(),
            )
            self.stdout.write(f"created demo circuit {meta['name']!r}")
        self.seed_postgres_demo(user)

    def seed_postgres_demo(self, user):
        demo = demo_postgres.from_environment()
        if demo.why_not:
            self.stderr.write(f"the PostgreSQL demo's connectors will not connect: {demo.why_not}")
        if Circuit.objects.filter(owner=user, name=demo_postgres.NAME).exists():
            return
        services.create_circuit(user, demo_postgres.NAME, demo_postgres.description(demo), "private",
                                demo_postgres.document(demo))
        self.stdout.write(f"created demo circuit {demo_postgres.NAME!r}")


def demos(examples):
    """(meta, a function giving the document) per demo circuit."""
    for path in sorted((examples / "circuits").glob("*.json")):
        if path.name.endswith(".meta.json"):
            continue
        meta_path = path.with_name(path.stem + ".meta.json")
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {"name": path.stem}
        yield meta, (lambda p=path: json.loads(p.read_text()))
    for language, pattern in (("sql", "sql/*.sql"), ("datalog", "datalog/*.dl")):
        for path in sorted(examples.glob(pattern)):
            meta_path = path.with_name(path.stem + ".meta.json")
            if meta_path.exists():
                yield json.loads(meta_path.read_text()), (lambda p=path, lang=language: compiled_source(lang, p.read_text()))
