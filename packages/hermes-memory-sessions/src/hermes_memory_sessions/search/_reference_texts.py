"""Everyday messages on unrelated topics: the background of a query in a small archive.

A message that only the dense side found must be more similar to the query than the
background by a margin (`hermes_memory_sessions.search._hybrid.DENSE_MARGINS`). In an archive with
enough candidates the background is the median of the query's own candidates; a small
archive has too few for a median, so the background is the median similarity of the query
to these texts instead, in the script of the candidate message (this model scores any CJK
text higher against a CJK query, and any Latin text higher against a Latin query).

Written for hermes-memory (MIT, like the repository): one sentence per topic, many topics,
so that no query finds more than one or two of them related and the median stays a
background. Their vectors for the default embedder are in `_reference_vectors`
(``tools/build_reference_vectors.py`` rebuilds them).
"""

from __future__ import annotations

__all__ = ["REFERENCE_TEXTS"]

REFERENCE_TEXTS: dict[str, tuple[str, ...]] = {
    "latin": (
        "My sister is getting married in June and I still need to buy a suit.",
        "The printer on the third floor keeps jamming when you print double-sided.",
        "We tried the new ramen place downtown; the broth was too salty for me.",
        "Can you remind me what time the dentist appointment is on Thursday?",
        "I finally finished reading that novel about the lighthouse keeper.",
        "The kids want a puppy but our lease does not allow pets.",
        "Traffic on the bridge was terrible this morning because of the marathon.",
        "I'm learning to play chess online and keep losing in the endgame.",
        "Our team lunch moved to Friday since half of us are out on Wednesday.",
        "The tomatoes in the garden are finally turning red.",
        "My laptop battery only lasts two hours now; maybe it is time to replace it.",
        "She said the museum is free on the first Sunday of every month.",
        "I think the thermostat is broken; the living room is freezing.",
        "Let's split the taxi to the airport, my flight leaves at 6 am.",
        "The quarterly sales numbers look better than last year.",
        "He has been running every morning to train for the half marathon.",
        "Please rename the slides before you send them to the client.",
        "We watched a documentary about octopuses and how they solve puzzles.",
        "The bakery on the corner sells out of croissants by nine.",
        "I need to renew my passport before the trip in September.",
        "The new phone update changed where the settings menu is.",
        "Grandma's recipe uses brown butter and a pinch of cardamom.",
        "Our neighbour is renovating the kitchen and the drilling starts at eight.",
        "The concert tickets sold out in ten minutes.",
    ),
    "cjk": (
        "我妹妹六月份结婚，我还得去买一套西装。",
        "三楼那台打印机一打双面就卡纸。",
        "我们去了市中心新开的拉面店，汤有点太咸了。",
        "周四看牙医是几点来着？提醒我一下。",
        "终于把那本讲灯塔守护人的小说看完了。",
        "孩子们想养小狗，可是租房合同不让养宠物。",
        "今天早上因为马拉松比赛，桥上堵得厉害。",
        "我在网上学下国际象棋，残局老是输。",
        "团队午餐改到周五了，周三一半人不在。",
        "院子里的番茄终于开始变红了。",
        "笔记本电脑的电池现在只能撑两个小时，该换了。",
        "她说博物馆每个月第一个周日免费开放。",
        "恒温器好像坏了，客厅冷得要命。",
        "我们一起打车去机场吧，我的航班早上六点起飞。",
        "这个季度的销售数字比去年好看多了。",
        "他每天早上跑步，准备参加半程马拉松。",
        "发给客户之前请先把幻灯片重新命名。",
        "我们看了一部关于章鱼怎么解谜的纪录片。",
        "街角那家面包店的可颂九点前就卖完了。",
        "九月出国之前我得先去续签护照。",
        "手机更新以后，设置菜单的位置变了。",
        "奶奶的食谱里要用焦化黄油，再加一点小豆蔻。",
        "邻居在装修厨房，每天早上八点就开始打钻。",
        "演唱会的票十分钟就卖光了。",
    ),
}
