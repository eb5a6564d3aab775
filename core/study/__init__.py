"""Human-study annotation sessions and LLM evaluation on VAP questions (docs/study.md).

Qt-free: scene descriptions (:mod:`.describe`), question sources (:mod:`.source`), the study file and its
designer (:mod:`.design`), participant journals (:mod:`.journal`), scoring and exports (:mod:`.report`), Fleiss'
kappa (:mod:`.kappa`) and LLM prompting, answer parsing and back-ends (:mod:`.prompts`, :mod:`.llm`). The studio's
designer, participant runner and results view (widgets/study_*.py, app/features/study/controller.py) sit on top.
"""
