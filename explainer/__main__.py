from explainer.surfaces.cli import entry

entry()
