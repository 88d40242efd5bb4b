// Corpus data: Aesop's Fables in George Fyler Townsend's translation (1867), second part.
// Public domain (published 1867; see corpus.cpp).
#include "local/tokenizer/corpus_texts.hpp"

namespace tinker::local::corpus {

std::string_view aesop_fables_part_two() {
  return R"corpus(
The Milk-Woman and Her Pail

A FARMER'S daughter was carrying her Pail of milk from the field to the farmhouse, when she fell a-musing. "The money for which this milk will be sold, will buy at least three hundred eggs. The eggs, allowing for all mishaps, will produce two hundred and fifty chickens. The chickens will become ready for the market when poultry will fetch the highest price, so that by the end of the year I shall have money enough from my share to buy a new gown. In this dress I will go to the Christmas parties, where all the young fellows will propose to me, but I will toss my head and refuse them every one." At this moment she tossed her head in unison with her thoughts, when down fell the milk pail to the ground, and all her imaginary schemes perished in a moment.

The Father and His Sons

A FATHER had a family of sons who were perpetually quarreling among themselves. When he failed to heal their disputes by his exhortations, he determined to give them a practical illustration of the evils of disunion; and for this purpose he one day told them to bring him a bundle of sticks. When they had done so, he placed the faggot into the hands of each of them in succession, and ordered them to break it in pieces. They tried with all their strength, and were not able to do it. He next opened the faggot, took the sticks separately, one by one, and again put them into his sons' hands, upon which they broke them easily. He then addressed them in these words: "My sons, if you are of one mind, and unite to assist each other, you will be as this faggot, uninjured by all the attempts of your enemies; but if you are divided among yourselves, you will be broken as easily as these sticks."

The Ass in the Lion's Skin

AN ASS, having put on the Lion's skin, roamed about in the forest and amused himself by frightening all the foolish animals he met in his wanderings. At last coming upon a Fox, he tried to frighten him also, but the Fox no sooner heard the sound of his voice than he exclaimed, "I might possibly have been frightened myself, if I had not heard your bray."

The Oak and the Reeds

A VERY LARGE OAK was uprooted by the wind and thrown across a stream. It fell among some Reeds, which it thus addressed: "I wonder how you, who are so light and weak, are not entirely crushed by these strong winds." They replied, "You fight and contend with the wind, and consequently you are destroyed; while we on the contrary bend before the least breath of air, and therefore remain unbroken, and escape."

The Bear and the Two Travelers

TWO MEN were traveling together, when a Bear suddenly met them on their path. One of them climbed up quickly into a tree and concealed himself in the branches. The other, seeing that he must be attacked, fell flat on the ground, and when the Bear came up and felt him with his snout, and smelt him all over, he held his breath, and feigned the appearance of death as much as he could. The Bear soon left him, for it is said he will not touch a dead body. When he was quite gone, the other Traveler descended from the tree, and jocularly inquired of his friend what it was the Bear had whispered in his ear. "He gave me this advice," his companion replied. "Never travel with a friend who deserts you at the approach of danger." Misfortune tests the sincerity of friends.

The Dog in the Manger

A DOG lay in a manger, and by his growling and snapping prevented the oxen from eating the hay which had been placed for them. "What a selfish Dog!" said one of them to his companions; "he cannot eat the hay himself, and yet refuses to allow those to eat who can."

The Boy and the Filberts

A BOY put his hand into a pitcher full of filberts. He grasped as many as he could possibly hold, but when he tried to pull out his hand, he was prevented from doing so by the neck of the pitcher. Unwilling to lose his filberts, and yet unable to withdraw his hand, he burst into tears and bitterly lamented his disappointment. A bystander said to him, "Be satisfied with half the quantity, and you will readily draw out your hand." Do not attempt too much at once.

The Lioness

A CONTROVERSY prevailed among the beasts of the field as to which of the animals deserved the most credit for producing the greatest number of whelps at a birth. They rushed clamorously into the presence of the Lioness and demanded of her the settlement of the dispute. "And you," they said, "how many sons have you at a birth?" The Lioness laughed at them, and said: "Why! I have only one; but that one is altogether a thoroughbred Lion." The value is in the worth, not in the number.

The Gnat and the Bull

A GNAT settled on the horn of a Bull, and sat there a long time. Just as he was about to fly off, he made a buzzing noise, and inquired of the Bull if he would like him to go. The Bull replied, "I did not know you had come, and I shall not miss you when you go away." Some men are of more consequence in their own eyes than in the eyes of their neighbors.

The Fox Who Had Lost His Tail

A FOX caught in a trap escaped, but in so doing lost his tail. Thereafter, feeling his life a burden from the shame and ridicule to which he was exposed, he schemed to convince all the other Foxes that being tailless was much more attractive, thus making up for his own deprivation. He assembled a good many Foxes and publicly advised them to cut off their tails, saying that they would not only look much better without them, but that they would get rid of the weight of the brush, which was a very great inconvenience. One of them interrupting him said, "If you had not yourself lost your tail, my friend, you would not thus counsel us."

The Miser

A MISER sold all that he had and bought a lump of gold, which he buried in a hole in the ground by the side of an old wall and went to look at daily. One of his workmen observed his frequent visits to the spot and decided to watch his movements. He soon discovered the secret of the hidden treasure, and digging down, came to the lump of gold, and stole it. The Miser, on his next visit, found the hole empty and began to tear his hair and to make loud lamentations. A neighbor, seeing him overcome with grief and learning the cause, said, "Pray do not grieve so; but go and take a stone, and place it in the hole, and fancy that the gold is still lying there. It will do you quite the same service; for when the gold was there, you had it not, as you did not make the slightest use of it."

The Two Pots

A RIVER carried down in its stream two Pots, one made of earthenware and the other of brass. The Earthen Pot said to the Brass Pot, "Pray keep at a distance and do not come near me, for if you touch me ever so slightly, I shall be broken in pieces, and besides, I by no means wish to come near you." Equals make the best friends.

The Fox and the Mask

A FOX entered the house of an actor and, rummaging through all his properties, came upon a Mask, an admirable imitation of a human head. He placed his paws on it and said, "What a beautiful head! Yet it is of no value, as it entirely lacks brains."

The Eagle and the Arrow

AN EAGLE sat on a lofty rock, watching the movements of a Hare whom he sought to make his prey. An archer, who saw the Eagle from a place of concealment, took an accurate aim and wounded him mortally. The Eagle gave one look at the arrow that had entered his heart and saw in that single glance that its feathers had been furnished by himself. "It is a double grief to me," he exclaimed, "that I should perish by an arrow feathered from my own wings."

The Belly and the Members

THE MEMBERS of the Body rebelled against the Belly, and said, "Why should we be perpetually engaged in administering to your wants, while you do nothing but take your rest, and enjoy yourself in luxury and self-indulgence?" The Members carried out their resolve and refused their assistance to the Belly. The whole Body quickly became debilitated, and the hands, feet, mouth, and eyes, when too late, repented of their folly.

The Ant and the Dove

AN ANT went to the bank of a river to quench its thirst, and being carried away by the rush of the stream, was on the point of drowning. A Dove sitting on a tree overhanging the water plucked a leaf and let it fall into the stream close to her. The Ant climbed onto it and floated in safety to the bank. Shortly afterwards a birdcatcher came and stood under the tree, and laid his lime-twigs for the Dove, which sat in the branches. The Ant, perceiving his design, stung him in the foot. In pain the birdcatcher threw down the twigs, and the noise made the Dove take wing.

The Mice in Council

THE MICE summoned a council to decide how they might best devise means of warning themselves of the approach of their great enemy the Cat. Among the many plans suggested, the one that found most favor was the proposal to tie a bell to the neck of the Cat, so that the Mice, being warned by the sound of the tinkling, might run away and hide themselves in their holes at his approach. But when the Mice further debated who among them should thus "bell the Cat," there was no one found to do it.
)corpus";
}

}  // namespace tinker::local::corpus
