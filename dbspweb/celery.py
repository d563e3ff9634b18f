"""The Celery app. Workers must use a non-forking pool (solo or threads): the py4j
gateway to Spark's JVM is not fork-safe, and each worker process owns one SparkSession."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dbspweb.settings")

app = Celery("dbspweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["workers"])
