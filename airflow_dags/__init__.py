"""Airflow DAGs that run OffsetLake's stages (point Airflow's dags folder here)."""
