"Build script: every piece of metadata comes from settings.ini, the one place nbdev and setuptools share."
from configparser import ConfigParser
from pathlib import Path
import shlex, setuptools

root = Path(__file__).parent
cfg = ConfigParser(delimiters=['='])
cfg.read(root/'settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']

licenses = {'apache2': 'Apache-2.0'}  # SPDX expressions: setuptools no longer wants license classifiers
statuses = ['Planning', 'Pre-Alpha', 'Alpha', 'Beta', 'Production/Stable', 'Mature', 'Inactive']
lic = licenses[cfg['license']]
py_versions = ['3.10', '3.11', '3.12', '3.13']
min_python = cfg['min_python']

def reqs(key): return shlex.split(cfg.get(key, ''))
# The extras: each `extra_NAME` line of settings.ini is `pip install 'gaia_mas[NAME]'`; `all` is every one of them, and
# `dev` is `all` with the dev tools (the tests need every extra)
extras = {k.removeprefix('extra_'): reqs(k) for k in cfg if k.startswith('extra_')}
extras['all'] = sorted({r for rs in extras.values() for r in rs})
extras['dev'] = extras['all'] + reqs('dev_requirements')
scripts = [s.strip() for s in cfg.get('console_scripts', '').split('\n') if s.strip()]
readme = root/'README.md'
# Each folder of prompts/ (baseline/, templates/, ...) is a data-only package under gaia_mas.prompts.
# The sample collection (nbs/samples/kb: documents and their golden questions) ships as gaia_mas.samples, so the
# quickstart and `langgraph dev` have a knowledge base to answer from in a plain `pip install`.
sample_pkgs = ['gaia_mas.samples', 'gaia_mas.samples.docs']
prompt_pkgs = ['gaia_mas.prompts'] + sorted(f'gaia_mas.prompts.{d.name}' for d in (root/'prompts').iterdir() if d.is_dir() and not d.name.startswith(('_', '.')))

setuptools.setup(
    name=cfg['lib_name'], version=cfg['version'], license=lic,
    description=cfg['description'], keywords=cfg['keywords'],
    author=cfg['author'], author_email=cfg['author_email'], url=cfg['git_url'],
    classifiers=['Development Status :: ' + str(cfg['status']) + ' - ' + statuses[int(cfg['status'])],
                 'Intended Audience :: ' + cfg['audience'].title(),
                 'Natural Language :: ' + cfg['language'].title()]
                + ['Programming Language :: Python :: ' + v for v in py_versions[py_versions.index(min_python):]],
    # The prompts live at the top level (`prompts/`) so people can read and edit them;
    # they ship inside the wheel as the `gaia_mas.prompts` package data.
    packages=setuptools.find_packages(include=['gaia_mas', 'gaia_mas.*']) + prompt_pkgs + sample_pkgs,
    package_dir={'gaia_mas.prompts': 'prompts', 'gaia_mas.samples': 'nbs/samples/kb'},
    package_data={'gaia_mas': ['py.typed'], **{p: ['*.txt'] for p in prompt_pkgs}, 'gaia_mas.samples': ['golden.jsonl'],
                  'gaia_mas.samples.docs': ['*']},
    include_package_data=True,
    install_requires=reqs('requirements'),
    extras_require=extras,
    python_requires='>=' + min_python,
    long_description=readme.read_text(encoding='utf-8') if readme.exists() else cfg['description'],
    long_description_content_type='text/markdown',
    zip_safe=False,
    entry_points={'console_scripts': scripts, 'nbdev': [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
)
