"""Create the demo user and the demo circuits from examples/circuits/ (idempotent)."""
import json
import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from circuits import services
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
        examples = settings.BASE_DIR / "examples" / "circuits"
        for path in sorted(examples.glob("*.json")):
            if path.name.endswith(".meta.json"):
                continue
            meta_path = path.with_name(path.stem + ".meta.json")
            meta = json.loads(meta_path.read_text()) if meta_path.exists() else {"name": path.stem}
            if Circuit.objects.filter(owner=user, name=meta["name"]).exists():
                continue
            services.create_circuit(
                user, meta["name"], meta.get("description", ""), meta.get("visibility", "private"),
                json.loads(path.read_text()),
            )
            self.stdout.write(f"created demo circuit {meta['name']!r}")
